/**
 * Five real node processes on loopback, connected over TLS, with the default consensus settings
 * (sybil protection on: the five local genesis validators, k = 20, alpha = 15): blocks and txs
 * issued at one node are accepted by all with the same IDs; conflicting txs at two nodes end with
 * one accepted everywhere; garbage on the staking port drops that connection only.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, cb58Encode } from '@cornice/sdk';
import { REPO } from '../src/fixtures.js';
import { LOCAL_NODE_IDS, startLocalNetwork, until, type LocalNetwork } from '../src/network.js';
import type { NodeProcess } from '../src/process.js';
import { EWOQ_X, ewoqUtxo, transfer, txStatus } from '../src/x-chain.js';

let dir: string;
let net: LocalNetwork;
const node = (i: number): NodeProcess => net.nodes[i - 1]!.proc;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-net-'));
  net = await startLocalNetwork(dir, 5);
  // Every chain of every node bootstrapped (their APIs answer "bootstrapping" until then).
  await until('all chains bootstrapped', async () => {
    const reports = await Promise.all(net.nodes.map((n) => fetch(`${n.proc.url}/ext/health`).then((r) => r.text())));
    return reports.some((r) => r.includes('bootstrapping')) ? undefined : true;
  });
});
test.after(async () => {
  await net?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function ok(n: NodeProcess, path: string, method: string, params: unknown = {}) {
  const r = await n.call(path, method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result as Record<string, unknown>;
}

const tip = async (n: NodeProcess) => (await ok(n, 'bc/timestamp', 'timestamp.getBlock')) as { id: string; parentID: string; data: string };

/** The last `depth` timestamp block IDs of a node, newest first. */
async function chainOf(n: NodeProcess, depth: number): Promise<string[]> {
  const ids: string[] = [];
  let b = await tip(n);
  for (let i = 0; i < depth; i++) {
    ids.push(b.id);
    if (b.parentID === '11111111111111111111111111111111LpoYY') break;
    b = (await ok(n, 'bc/timestamp', 'timestamp.getBlock', { id: b.parentID })) as typeof b;
  }
  return ids;
}

test('every node connects to the four others (peer lists from the beacon); admin.peers names them', async () => {
  for (const n of net.nodes) {
    const peers = await until(`node ${n.index} has 4 peers`, async () => {
      const r = await ok(n.proc, 'admin', 'admin.peers');
      return (r.peers as string[]).length === 4 ? r : undefined;
    });
    const ids = (peers.details as Array<{ nodeID: string; ip: string; version: string }>).map((d) => d.nodeID).sort();
    assert.equal(ids, LOCAL_NODE_IDS.filter((_, i) => i !== n.index - 1).sort());
    for (const d of peers.details as Array<{ ip: string; version: string }>) {
      assert.match(d.ip, /^127\.0\.0\.1:\d+$/);
      assert.match(d.version, /^cornice\/\d+\.\d+\.\d+$/);
    }
  }
});

test('timestamp blocks proposed at different nodes end in one agreed chain on all five', async () => {
  const data = (b: number) => cb58Encode(new Uint8Array(32).fill(b));
  const landed = (d: string) => until(`${d} accepted everywhere`, async () => ((await Promise.all(net.nodes.map((n) => tip(n.proc)))).every((t) => t.data === d) ? true : undefined));
  // One after the other, at nodes 2 and 4.
  await ok(node(2), 'bc/timestamp', 'timestamp.proposeBlock', { data: data(2) });
  await landed(data(2));
  await ok(node(4), 'bc/timestamp', 'timestamp.proposeBlock', { data: data(4) });
  await landed(data(4));
  // At the same moment at nodes 1 and 5: competing blocks at one height; every node ends on the same chain.
  await Promise.all([ok(node(1), 'bc/timestamp', 'timestamp.proposeBlock', { data: data(1) }), ok(node(5), 'bc/timestamp', 'timestamp.proposeBlock', { data: data(5) })]);
  const chains = await until('one chain on all five, past both proposals', async () => {
    const cs = await Promise.all(net.nodes.map((n) => chainOf(n.proc, 6)));
    const top = await tip(node(1));
    const same = cs.every((c) => JSON.stringify(c) === JSON.stringify(cs[0]));
    return same && [data(1), data(5)].includes(top.data) ? cs : undefined;
  });
  assert.ok(chains[0]!.length >= 3);
});

const statusAt = txStatus;

test('an X-Chain tx issued at node 3 is accepted by all five', async () => {
  const to = PrivateKey.generate().address;
  const { tx } = transfer(await ewoqUtxo(node(3)), to, 1_000n);
  const { txID } = (await ok(node(3), 'bc/X', 'avm.issueTx', { tx })) as { txID: string };
  await until('accepted on every node', async () => ((await Promise.all(net.nodes.map((n) => statusAt(n.proc, txID)))).every((s) => s === 'Accepted') ? true : undefined));
  for (const n of net.nodes) {
    const { balance } = await ok(n.proc, 'bc/X', 'avm.getBalance', { address: `X-${to}`, assetID: 'AVA' });
    assert.is(balance, '1000');
  }
});

test('two conflicting txs issued at the same moment at nodes 2 and 4: exactly one is accepted, on every node', async () => {
  const utxo = await ewoqUtxo(node(1));
  const a = transfer(utxo, PrivateKey.generate().address, 1n);
  const b = transfer(utxo, PrivateKey.generate().address, 2n);
  const [ra, rb] = await Promise.all([node(2).call('bc/X', 'avm.issueTx', { tx: a.tx }), node(4).call('bc/X', 'avm.issueTx', { tx: b.tx })]);
  const ids = [ra, rb].map((r) => (r.result as { txID?: string } | undefined)?.txID).filter((x): x is string => x !== undefined);
  assert.ok(ids.length >= 1, `at least one issued: ${JSON.stringify([ra.error, rb.error])}`);
  const decided = await until('one accepted everywhere', async () => {
    const statuses = await Promise.all(ids.map(async (id) => Promise.all(net.nodes.map((n) => statusAt(n.proc, id)))));
    const acceptedEverywhere = statuses.filter((s) => s.every((x) => x === 'Accepted')).length;
    return acceptedEverywhere === 1 ? statuses : undefined;
  });
  // The other is accepted nowhere.
  const others = decided.filter((s) => !s.every((x) => x === 'Accepted'));
  for (const s of others) assert.not.ok(s.includes('Accepted'), JSON.stringify(s));
});

test('garbage on the staking port (no certificate, then bad frames from a real one) drops that connection only', async () => {
  const port = net.nodes[0]!.stakingPort;
  // 1. A TLS client without a certificate: the node closes the connection.
  const anonymous = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  await new Promise<void>((resolve) => anonymous.once('close', () => resolve()).once('error', () => undefined));
  // 2. A client with a valid certificate sending random frames and an oversized length prefix.
  const cert = readFileSync(`${REPO}core/fixtures/staking/local/staker5.crt`);
  const key = readFileSync(`${REPO}core/fixtures/staking/local/staker5.key`);
  for (let round = 0; round < 20; round++) {
    const s = connect({ host: '127.0.0.1', port, cert, key, rejectUnauthorized: false });
    await new Promise<void>((resolve) => s.once('secureConnect', () => resolve()).once('error', () => resolve()));
    const junk = new Uint8Array(64 + round * 7).map((_, i) => (i * 31 + round * 17) & 0xff);
    if (round % 3 === 0) junk.set([0x7f, 0xff, 0xff, 0xff], 0); // announces ~2 GiB
    s.write(junk);
    await new Promise<void>((resolve) => s.once('close', () => resolve()).once('error', () => undefined));
  }
  const health = await fetch(`${node(1).url}/ext/health`).then((r) => r.json() as Promise<{ healthy: boolean }>);
  assert.ok(health.healthy, JSON.stringify(health));
  // Still in consensus with the others.
  const data = cb58Encode(new Uint8Array(32).fill(0x5a));
  await ok(node(1), 'bc/timestamp', 'timestamp.proposeBlock', { data });
  await until('accepted on all five', async () => ((await Promise.all(net.nodes.map((n) => tip(n.proc)))).every((t) => t.data === data) ? true : undefined));
  const logs = node(1).logs.filter((l) => l.msg === 'dropping peer' || l.msg === 'dropping connection: unusable peer certificate');
  assert.ok(logs.length >= 1, 'the drops are logged');
});

/** The timestamp tip of a node, or undefined while it cannot say (bootstrapping, restarting). */
async function tipOrNothing(n: NodeProcess): Promise<{ id: string; data: string } | undefined> {
  try {
    const r = await n.call('bc/timestamp', 'timestamp.getBlock', {});
    return r.result as { id: string; data: string } | undefined;
  } catch {
    return undefined;
  }
}

/** Resolves once every given node has the same timestamp tip, holding `data` when given; that tip's ID. */
function sameTip(nodes: NodeProcess[], data?: string, maxMs = 30_000): Promise<string> {
  let seen = '';
  return until(
    'the same timestamp tip everywhere',
    async () => {
      const tips = await Promise.all(nodes.map(tipOrNothing));
      seen = JSON.stringify(tips.map((t) => t?.id.slice(0, 8)));
      const first = tips[0];
      if (!first || tips.some((t) => t?.id !== first.id)) return undefined;
      return data === undefined || first.data === data ? first.id : undefined;
    },
    maxMs,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; last seen: ${seen}`);
  });
}

const payload = (n: number) => cb58Encode(new Uint8Array(32).fill(n));

test('a sixth node (not a validator) joins by bootstrapping from scratch, then follows new blocks', async () => {
  const sixth = await net.add(6);
  if (process.env.DEBUG_NET) setTimeout(() => console.log(sixth.proc.logs.filter((l) => l.level !== 'debug').map((l) => JSON.stringify(l).slice(0, 300)).join('\n')), 8000);
  assert.not.ok(LOCAL_NODE_IDS.includes(sixth.proc.nodeId), 'a generated certificate');
  await sameTip(net.nodes.map((n) => n.proc));
  await ok(node(2), 'bc/timestamp', 'timestamp.proposeBlock', { data: payload(0x66) });
  await sameTip(net.nodes.map((n) => n.proc), payload(0x66));
  // The X-Chain too: what node 3 accepted earlier is there.
  const expected = (await ok(node(1), 'bc/X', 'avm.getBalance', { address: EWOQ_X, assetID: 'AVA' })).balance;
  await until('the X-Chain bootstrapped on the sixth node', async () => {
    const r = await sixth.proc.call('bc/X', 'avm.getBalance', { address: EWOQ_X, assetID: 'AVA' });
    if (r.error) assert.match(r.error.message, /chain X is bootstrapping/);
    return (r.result as { balance?: string } | undefined)?.balance === expected ? true : undefined;
  });
});

test('kill -9 one validator under load: the others keep accepting; restarted, it catches up to the same last accepted block', async () => {
  const victim = net.nodes[4]!;
  const others = net.nodes.filter((n) => n !== victim && n.index <= 5).map((n) => n.proc);
  // Timestamp payloads proposed at node 1 only (so none competes with another node's), each unique.
  const unique = (k: number) => cb58Encode(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? k >> 8 : i === 1 ? k & 0xff : 0x77)));
  let proposals = 0;
  let loading = true;
  const load = (async () => {
    while (loading) {
      await node(1).call('bc/timestamp', 'timestamp.proposeBlock', { data: unique(proposals++) }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  await victim.proc.stop('SIGKILL');
  const before = (await tip(node(1))).id;
  await until('blocks accepted without the killed node', async () => ((await tip(node(1))).id !== before ? true : undefined));
  loading = false;
  await load;
  // Every payload lands, in order: the last one is the tip everywhere.
  const tipId = await sameTip(others, unique(proposals - 1), 60_000);
  await victim.restart();
  assert.is(await sameTip([victim.proc, node(1)], unique(proposals - 1), 60_000), tipId);
});

test('with 3 of 5 validators stopped nothing is accepted; restarted, the network resumes', async () => {
  const stopped = net.nodes.filter((n) => [3, 4, 5].includes(n.index));
  await Promise.all(stopped.map((n) => n.proc.stop()));
  const before = (await tip(node(1))).id;
  await ok(node(1), 'bc/timestamp', 'timestamp.proposeBlock', { data: payload(0x33) });
  await new Promise((r) => setTimeout(r, 3_000));
  assert.is((await tip(node(1))).id, before, 'nothing accepted at node 1');
  assert.is((await tip(node(2))).id, before, 'nothing accepted at node 2');
  const health = (await fetch(`${node(1).url}/ext/health`).then((r) => r.json())) as { healthy: boolean; checks: Record<string, { error?: { message: string } }> };
  assert.not.ok(health.healthy);
  assert.match(health.checks['chain timestamp']?.error?.message ?? '', /waiting for validators/);
  await Promise.all(stopped.map((n) => n.restart()));
  await ok(node(3), 'bc/timestamp', 'timestamp.proposeBlock', { data: payload(0x34) }).catch(() => undefined);
  await until('a block accepted again on all validators', async () => {
    const t = await tip(node(1));
    return t.id !== before ? true : undefined;
  }, 60_000);
  await sameTip(net.nodes.filter((n) => n.index <= 5).map((n) => n.proc), undefined, 60_000);
});

test.run();
