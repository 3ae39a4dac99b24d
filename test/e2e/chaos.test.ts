/**
 * Chaos on five real node processes (the local genesis validators, default settings, TLS, LevelDB).
 * X-Chain and C-Chain transfers (and timestamp proposals) go round-robin to every node that is up,
 * while a hostile peer floods node 1's staking port, and:
 *   1. node 5 is frozen (SIGSTOP): the others go on, and node 1's health names it as not answering;
 *   2. node 4 is killed (-9) too: three of five answer, below alpha/k — nothing can be decided, and
 *      health says so (unhealthy) on the nodes left;
 *   3. node 5 is thawed: decisions resume, health is green again;
 *   4. node 4 is started again on its data: it bootstraps (from node 1, through the flood) and
 *      catches up, its health red until it has.
 * Asserted: safety (no two nodes ever report different blocks at one height, sampled twice a second
 * from every node's health; of each double spend sent to two nodes at once exactly one is accepted,
 * the same everywhere), liveness (every transfer sent is accepted on all five within a bound after
 * the last fault ends), agreement at the end (the same last accepted block of X, C, P and timestamp
 * on all five), and truthful health at each step.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Wallet } from 'ethers';
import { PrivateKey, cb58Encode } from '@cornice/sdk';
import type { Utxo } from '@cornice/avm';
import { startLocalNetwork, until, type LocalNetwork, type NetNode } from '../src/network.js';
import type { NodeProcess } from '../src/process.js';
import { splitEwoq, transfer, txStatus } from '../src/x-chain.js';

const EWOQ_EVM = '0x56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
const CHAINS = ['X', 'C', 'P', 'timestamp'] as const;
/** After the last fault ends, every transfer is accepted on all five within this. */
const LIVENESS_BOUND_MS = 60_000;

let dir: string;
let net: LocalNetwork;
const nodeOf = (i: number): NetNode => net.nodes[i - 1]!;

interface ChainCheck {
  message?: { lastAcceptedHeight?: number; lastAccepted?: string; validators?: string };
  error?: { message: string };
}
interface Health {
  status: number;
  checks: Record<string, ChainCheck>;
}

async function health(n: NodeProcess): Promise<Health | undefined> {
  try {
    const r = await fetch(`${n.url}/ext/health`, { signal: AbortSignal.timeout(3_000) });
    return { status: r.status, checks: ((await r.json()) as { checks: Record<string, ChainCheck> }).checks };
  } catch {
    return undefined;
  }
}

/** Who is up and taking load: a node leaves this set a second before its fault, and is back once it answers again. */
const live = new Set<number>([1, 2, 3, 4, 5]);
let turn = 0;
const nextLive = (): NetNode => {
  const up = [...live].sort();
  return nodeOf(up[turn++ % up.length]!);
};

/** The height sampler runs while this holds (test.after ends it, whatever failed). */
let sampling = false;
/** Every (chain, height) -> block ID any node reported; a second ID for one height is a safety violation. */
const seen = new Map<string, string>();
const conflicts: string[] = [];
async function sampleHeights(): Promise<void> {
  await Promise.all(
    [...live].map(async (i) => {
      const h = await health(nodeOf(i).proc);
      for (const chain of CHAINS) {
        const m = h?.checks[`chain ${chain}`]?.message;
        if (m?.lastAccepted === undefined || m.lastAcceptedHeight === undefined) continue;
        const key = `${chain}@${m.lastAcceptedHeight}`;
        const known = seen.get(key);
        if (known === undefined) seen.set(key, m.lastAccepted);
        else if (known !== m.lastAccepted) conflicts.push(`${key}: ${known} and ${m.lastAccepted} (node ${i})`);
      }
    }),
  );
}

/** Keeps `count` idle TCP connections and TLS handshakes that never send Version open to `port`, from 127.0.0.2-21. */
function flood(port: number, count: number): () => void {
  let on = true;
  const sockets = new Set<Socket>();
  const open = (k: number) => {
    if (!on) return;
    const localAddress = `127.0.0.${2 + (k % 20)}`;
    const tcp = tcpConnect({ host: '127.0.0.1', port, localAddress });
    // A third start TLS and never send Version; the others stay idle TCP.
    const s: Socket = k % 3 === 0 ? tlsConnect({ socket: tcp, rejectUnauthorized: false }) : tcp;
    if (s !== tcp) tcp.on('error', () => undefined);
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      sockets.delete(s);
      setTimeout(() => open(k), 200);
    });
  };
  for (let k = 0; k < count; k++) open(k);
  return () => {
    on = false;
    for (const s of sockets) s.destroy();
  };
}

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-chaos-'));
  net = await startLocalNetwork(dir, 5);
  await until(
    'every chain of every node bootstrapped',
    async () => ((await Promise.all(net.nodes.map((n) => health(n.proc)))).every((h) => h?.status === 200) ? true : undefined),
    60_000,
  );
});
test.after(async () => {
  sampling = false;
  for (const n of net?.nodes ?? []) {
    try {
      n.proc.proc.kill('SIGCONT');
    } catch {}
  }
  await net?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('transfers round-robin while a validator freezes, another dies, a peer floods: safe, live, agreed, truthful health', async () => {
  const phases: string[] = [];
  const note = (s: string) => phases.push(`${new Date().toISOString().slice(11, 23)} ${s}`);
  const fail = (what: string) => new Error(`${what}\n${phases.join('\n')}`);

  // X: ewoq's UTXO split in 1,000-nAVA pieces, each spent by one transfer (a few by two at once).
  const wallet = PrivateKey.generate().address;
  const pieces: Utxo[] = await splitEwoq(nodeOf(1).proc, 300, 1_000n, (txID) =>
    until(`split ${txID}`, async () => ((await txStatus(nodeOf(1).proc, txID)) === 'Accepted' ? true : undefined)).then(() => undefined),
  );
  // C: ewoq's nonces in order, each transfer to the next node up (gossip carries it to the others).
  const ewoq = new Wallet(EWOQ_EVM);
  const evm = async (n: NodeProcess, method: string, params: unknown[]) => {
    const r = await fetch(`${n.url}/ext/bc/C/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(10_000) });
    return (await r.json()) as { result?: unknown; error?: { message: string } };
  };
  const chainId = Number((await evm(nodeOf(1).proc, 'eth_chainId', [])).result);
  const gasPrice = BigInt((await evm(nodeOf(1).proc, 'eth_gasPrice', [])).result as string) * 3n;
  let nonce = Number((await evm(nodeOf(1).proc, 'eth_getTransactionCount', [ewoq.address, 'pending'])).result);

  const xSent: string[] = [];
  const doubleSpends: Array<[string, string]> = [];
  const cSent: string[] = [];
  const sendErrors: string[] = [];
  /**
   * Sends `call` to the next node up; to another one when it fails (a node may go down meanwhile).
   * True once a node took it; false when every try failed or it was refused (noted in sendErrors).
   */
  const send = async (call: (n: NodeProcess) => Promise<{ error?: { message: string } }>): Promise<boolean> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const n = nextLive().proc;
      try {
        const r = await call(n);
        if (!r.error || /already known/.test(r.error.message)) return true;
        sendErrors.push(r.error.message);
        return false;
      } catch {
        // down or busy: the next one
      }
    }
    return false;
  };
  let loading = true;
  let k = 0;
  const load = (async () => {
    while (loading) {
      const tasks: Promise<unknown>[] = [];
      const piece = pieces[k++];
      if (piece && k % 25 === 0) {
        // A double spend: the same piece to two recipients at two nodes at once.
        const a = transfer(piece, PrivateKey.generate().address, 1n);
        const b = transfer(piece, PrivateKey.generate().address, 2n);
        doubleSpends.push([a.txID, b.txID]);
        tasks.push(send((n) => n.call('bc/X', 'avm.issueTx', { tx: a.tx })), send((n) => n.call('bc/X', 'avm.issueTx', { tx: b.tx })));
      } else if (piece) {
        const t = transfer(piece, wallet, 1n);
        tasks.push(send((n) => n.call('bc/X', 'avm.issueTx', { tx: t.tx })).then((took) => took && xSent.push(t.txID)));
      }
      // The next nonce only once a node took this one (a gap would hold every later transfer).
      const raw = await ewoq.signTransaction({ to: '0x' + '33'.repeat(20), value: 1n, nonce, gasLimit: 21_000n, gasPrice, chainId, type: 0 });
      tasks.push(
        send(async (n) => {
          const r = await evm(n, 'eth_sendRawTransaction', [raw]);
          if (typeof r.result === 'string') cSent.push(r.result);
          return r;
        }).then((took) => took && nonce++),
      );
      if (k % 8 === 0) tasks.push(send((n) => n.call('bc/timestamp', 'timestamp.proposeBlock', { data: cb58Encode(Uint8Array.from({ length: 32 }, (_, i) => (i < 2 ? (k >> (8 * i)) & 0xff : 0x5c))) })));
      await Promise.all(tasks);
      await new Promise((r) => setTimeout(r, 120));
    }
  })();
  sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sampleHeights();
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const stopFlood = flood(nodeOf(1).stakingPort, 300);
  note('load and flood started');

  const chainHealth = async (i: number, chain: string) => (await health(nodeOf(i).proc))?.checks[`chain ${chain}`];
  const progress = async (chain: string) => (await chainHealth(1, chain))?.message?.lastAcceptedHeight ?? -1;
  const movesOn = async (chain: string, what: string) => {
    const from = await progress(chain);
    await until(what, async () => ((await progress(chain)) > from ? true : undefined), 30_000).catch(() => {
      throw fail(`${what}: ${chain} stayed at ${from}`);
    });
  };
  try {
    await new Promise((r) => setTimeout(r, 3_000));

    // 1. Node 5 frozen.
    live.delete(5);
    await new Promise((r) => setTimeout(r, 1_000));
    nodeOf(5).proc.proc.kill('SIGSTOP');
    note('node 5 frozen');
    await until('node 1 says node 5 is not answering (X and C), and stays healthy', async () => {
      const h = await health(nodeOf(1).proc);
      const named = ['X', 'C'].every((c) => /1 not answering/.test(h?.checks[`chain ${c}`]?.message?.validators ?? ''));
      return named && h?.status === 200 ? true : undefined;
    }, 30_000).catch(() => {
      throw fail('node 5 frozen: not reported');
    });
    await movesOn('X', 'X-Chain decides with node 5 frozen');
    await movesOn('C', 'C-Chain decides with node 5 frozen');
    note('X and C decide without node 5');
    await new Promise((r) => setTimeout(r, 4_000)); // more load while it is frozen

    // 2. Node 4 killed too: three of five answer, below 75%.
    live.delete(4);
    await new Promise((r) => setTimeout(r, 1_000));
    await nodeOf(4).proc.stop('SIGKILL');
    note('node 4 killed');
    for (const i of [1, 2, 3]) {
      await until(`node ${i} unhealthy: too few validators`, async () => {
        const h = await health(nodeOf(i).proc);
        const said = ['X', 'C'].every((c) => /too few validators answering|waiting for validators/.test(h?.checks[`chain ${c}`]?.error?.message ?? ''));
        return h?.status === 503 && said ? true : undefined;
      }, 30_000).catch(() => {
        throw fail(`node ${i}: health did not say it cannot decide`);
      });
    }
    note('nodes 1-3 report unhealthy');
    // Stuck indeed: nothing is decided while three of five answer (the txs sent meanwhile wait).
    const stuckAt = { X: await progress('X'), C: await progress('C') };
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal({ X: await progress('X'), C: await progress('C') }, stuckAt, 'nothing accepted with three of five answering');

    // 3. Node 5 thawed: four of five again.
    nodeOf(5).proc.proc.kill('SIGCONT');
    note('node 5 thawed');
    await until('node 5 answers and is green', async () => ((await health(nodeOf(5).proc))?.status === 200 ? true : undefined), 60_000).catch(() => {
      throw fail('node 5 did not recover after the thaw');
    });
    live.add(5);
    for (const i of [1, 2, 3]) {
      await until(`node ${i} green again`, async () => ((await health(nodeOf(i).proc))?.status === 200 ? true : undefined), 30_000).catch(() => {
        throw fail(`node ${i}: still unhealthy with four of five up`);
      });
    }
    await movesOn('X', 'X-Chain decides again');
    await movesOn('C', 'C-Chain decides again');
    note('decisions resumed, health green');
    await new Promise((r) => setTimeout(r, 4_000)); // blocks node 4 has to catch up on

    // 4. Node 4 started again on its data: red while it bootstraps and catches up, then green.
    const restarting = nodeOf(4).restart();
    const sawRed = (async () => {
      let red = false;
      await restarting;
      for (let i = 0; i < 600 && !red; i++) {
        const h = await health(nodeOf(4).proc);
        if (h && h.status !== 200) red = true;
        else if (h?.status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return red;
    })();
    await restarting;
    note('node 4 restarted');
    await until('node 4 green', async () => ((await health(nodeOf(4).proc))?.status === 200 ? true : undefined), 90_000).catch(() => {
      throw fail('node 4 did not catch up');
    });
    live.add(4);
    note(`node 4 caught up (red while catching up: ${await sawRed})`);
    await new Promise((r) => setTimeout(r, 3_000));
  } finally {
    loading = false;
    await load;
    stopFlood();
  }
  const faultsEnded = performance.now();
  note(`load stopped: ${xSent.length} X transfers, ${doubleSpends.length} double spends, ${cSent.length} C transfers`);

  try {
    await afterFaults(faultsEnded);
  } finally {
    sampling = false;
    await sampler;
  }
  if (process.env.CHAOS_VERBOSE) console.log(phases.join('\n'));

  async function afterFaults(faultsEnded: number): Promise<void> {
    // Liveness: every transfer accepted on all five within the bound.
    const all = net.nodes.map((n) => n.proc);
    const left = () => Math.max(1_000, LIVENESS_BOUND_MS - (performance.now() - faultsEnded));
    await until('every X transfer accepted on all five', async () => {
      for (const n of all) for (const id of xSent) if ((await txStatus(n, id)) !== 'Accepted') return undefined;
      return true;
    }, left()).catch(() => {
      throw fail('X transfers not all accepted within the bound');
    });
    await until('every C transfer in a block on all five', async () => {
      for (const n of all) {
        for (const h of cSent) if (!(await evm(n, 'eth_getTransactionReceipt', [h])).result) return undefined;
      }
      return true;
    }, left()).catch(async () => {
      // Where each node stands: its height, ewoq's nonce there, and how many of the sent txs it lacks.
      const where = await Promise.all(all.map(async (n, i) => {
        let missing = 0;
        for (const h of cSent) if (!(await evm(n, 'eth_getTransactionReceipt', [h]).catch(() => ({ result: undefined }))).result) missing++;
        const height = Number((await evm(n, 'eth_blockNumber', []).catch(() => ({ result: -1 }))).result);
        const at = (tag: string) => evm(n, 'eth_getTransactionCount', [ewoq.address, tag]).then((r) => Number(r.result)).catch(() => -1);
        return `node ${i + 1}: height ${height}, nonce ${await at('latest')} (pending ${await at('pending')}), ${missing} of ${cSent.length} missing`;
      }));
      throw fail(`C transfers not all included within the bound (last nonce sent ${nonce - 1})\n${where.join('\n')}`);
    });
    // Of each double spend, exactly one accepted, the same on every node.
    for (const [a, b] of doubleSpends) {
      const statuses = await Promise.all(all.map(async (n) => [await txStatus(n, a), await txStatus(n, b)]));
      const winners = new Set(statuses.map(([sa, sb]) => (sa === 'Accepted' ? 'a' : sb === 'Accepted' ? 'b' : 'none')));
      assert.is(winners.size, 1, `double spend ${a}/${b}: ${JSON.stringify(statuses)}`);
      assert.not.ok(winners.has('none'), `double spend ${a}/${b} decided nowhere: ${JSON.stringify(statuses)}`);
      assert.not.ok(statuses.some(([sa, sb]) => sa === 'Accepted' && sb === 'Accepted'));
    }

    // Agreement: the same last accepted block of every chain on all five; no height ever had two blocks.
    const finals = await until('the same last accepted block on all five, every chain', async () => {
      const hs = await Promise.all(all.map(health));
      const tips = CHAINS.map((c) => hs.map((h) => h?.checks[`chain ${c}`]?.message?.lastAccepted));
      return tips.every((t) => t[0] !== undefined && t.every((id) => id === t[0])) && hs.every((h) => h?.status === 200) ? tips : undefined;
    }, 30_000).catch(() => {
      throw fail('the nodes did not agree at the end');
    });
    await sampleHeights();
    assert.equal(conflicts, [], 'two blocks at one height');
    assert.ok(seen.size > 20, `heights sampled: ${seen.size}`);
    assert.equal(sendErrors.filter((e) => !/nonce too low|conflict|already|spent|missing|not found|UTXO/i.test(e)), [], 'refusals other than double spends');
    assert.ok(xSent.length >= 50 && cSent.length >= 50, `load: ${xSent.length} X, ${cSent.length} C`);
    assert.is(finals.length, CHAINS.length);
  }
});

test.run();
