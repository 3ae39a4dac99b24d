/**
 * The X-Chain through real HTTP on a node started as `npm start` does: the ewoq key's AVA, a send,
 * fixed- and variable-cap assets with a 2-of-3 mint, a tx built and signed offline from getUTXOs,
 * the native token X -> P -> X, and a conflicting pair of txs (one Accepted, one Rejected); issue
 * 32's lock-out (ten free assets of 1,024 UTXOs and dust sent to an address) leaving its owner able
 * to read and spend what it holds; the chain configs' free-tx bounds reaching the VMs.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import { WebSocket } from 'ws';
import * as assert from 'uvu/assert';
import { Id, PrivateKey, ShortId, cb58Decode, cb58Encode } from '@cornice/sdk';
import { decodeTx, decodeUtxo, encodeTx, producedUtxos, txIdOf, unsignedBytes, type Tx, type UnsignedTx, type Utxo } from '@cornice/avm';
import { npmStartFlags } from '../src/fixtures.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';

const EWOQ_KEY = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
const EWOQ = PrivateKey.fromString(EWOQ_KEY);
const EWOQ_X = 'X-6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';
const X_CHAIN = '4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH';
const AVA = 'n8XH5JY1EX5VYqDeAhB4Zd4GKxi9UNQy6oPpMsCAj1Q6xkiiL';
const USER = { username: 'xavier', password: 'a Strong passw0rd!' };

let dir: string;
let node: NodeProcess;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-avm-'));
  // Chain configs: the lock-out test creates ~4.7 MB of free assets at once, over the X-Chain's
  // default free-tx budget (4 MiB a minute); the timestamp chain's is made small to be seen.
  await mkdir(join(dir, 'chains', 'X'), { recursive: true });
  await writeFile(join(dir, 'chains', 'X', 'config.json'), JSON.stringify({ 'free-tx-bytes-per-minute': 64 << 20 }));
  await mkdir(join(dir, 'chains', 'timestamp'), { recursive: true });
  await writeFile(join(dir, 'chains', 'timestamp', 'config.json'), JSON.stringify({ 'free-txs-per-minute': 20 }));
  node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/node`, `--chain-config-dir=${dir}/chains`]);
  await ok('keystore', 'keystore.createUser', USER);
});
test.after(async () => {
  await node?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function ok(path: string, method: string, params: unknown = {}) {
  const r = await node.call(path, method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, maxMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() - started > maxMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const statusOf = async (txID: string) => (await ok('X', 'avm.getTxStatus', { txID })).status as string;
const accepted = (txID: string) => until(`tx ${txID} accepted`, async () => ((await statusOf(txID)) === 'Accepted' ? true : undefined));
const balance = async (address: string, assetID = 'AVA') => BigInt((await ok('X', 'avm.getBalance', { address, assetID })).balance);

/** A BaseTx spending `utxo` (owned by `key`): `amount` to `to`, the rest back to the key; signed offline. */
function offlineTransfer(utxo: Utxo, key: PrivateKey, to: ShortId, amount: bigint): string {
  if (utxo.out.kind !== 'transfer') throw new Error('not a transfer output');
  const owners = (a: ShortId) => ({ kind: 'transfer' as const, amount: 0n, locktime: 0n, threshold: 1, addresses: [a] });
  const outs = [
    { assetId: utxo.assetId, out: { ...owners(to), amount } },
    { assetId: utxo.assetId, out: { ...owners(key.address), amount: utxo.out.amount - amount } },
  ];
  const unsigned: UnsignedTx = {
    kind: 'base',
    networkId: 12345,
    chainId: Id.fromString(X_CHAIN),
    outs: outs.sort(compareOut),
    ins: [{ txId: utxo.txId, outputIndex: utxo.outputIndex, assetId: utxo.assetId, input: { amount: utxo.out.amount, sigIndices: [utxo.out.addresses.findIndex((x) => x.equals(key.address))] } }],
  };
  const tx: Tx = { unsigned, creds: [{ sigs: [key.sign(unsignedBytes(unsigned))] }] };
  return cb58Encode(encodeTx(tx));
}

/** A BaseTx spending `utxo` (owned by `key`) into `amounts` for `to` (the rest back to the key); signed offline. */
function offlineSplit(utxo: Utxo, key: PrivateKey, to: ShortId, amounts: bigint[]): { tx: string; txID: string; made: Utxo[] } {
  if (utxo.out.kind !== 'transfer') throw new Error('not a transfer output');
  const spent = amounts.reduce((a, b) => a + b, 0n);
  const out = (address: ShortId, amount: bigint) => ({ assetId: utxo.assetId, out: { kind: 'transfer' as const, amount, locktime: 0n, threshold: 1, addresses: [address] } });
  const unsigned: UnsignedTx = {
    kind: 'base',
    networkId: 12345,
    chainId: Id.fromString(X_CHAIN),
    outs: [...amounts.map((a) => out(to, a)), out(key.address, utxo.out.amount - spent)].sort(compareOut),
    ins: [{ txId: utxo.txId, outputIndex: utxo.outputIndex, assetId: utxo.assetId, input: { amount: utxo.out.amount, sigIndices: [utxo.out.addresses.findIndex((x) => x.equals(key.address))] } }],
  };
  const bytes = encodeTx({ unsigned, creds: [{ sigs: [key.sign(unsignedBytes(unsigned))] }] });
  const id = txIdOf(bytes);
  return { tx: cb58Encode(bytes), txID: id.toString(), made: producedUtxos(id, unsigned) };
}

function compareOut(a: { out: { amount: bigint; addresses: ShortId[] } }, b: { out: { amount: bigint; addresses: ShortId[] } }): number {
  // Same asset here: the reference sorts by the output's bytes — amount (u64 BE) first.
  if (a.out.amount !== b.out.amount) return a.out.amount < b.out.amount ? -1 : 1;
  return a.out.addresses[0]!.compare(b.out.addresses[0]!);
}

test('importKey(ewoq) -> AVA balance -> send to a new address -> Accepted -> balances moved', async () => {
  assert.is((await ok('X', 'avm.importKey', { ...USER, privateKey: EWOQ_KEY })).address, EWOQ_X);
  const start = await balance(EWOQ_X);
  assert.is(start, 45_000_000n * 1_000_000_000n);
  assert.is(await balance(EWOQ_X, 'NATIVE'), start);
  assert.is(await balance(EWOQ_X, AVA), start);
  const to = (await ok('X', 'avm.createAddress', USER)).address as string;
  assert.match(to, /^X-/);
  const { txID } = await ok('X', 'avm.send', { ...USER, amount: 1_000, assetID: 'AVA', to });
  await accepted(txID);
  assert.is(await balance(to), 1_000n);
  assert.is(await balance(EWOQ_X), start - 1_000n);
});

test('the pubsub WebSocket reports an accepted tx; a page from another origin cannot open it', async () => {
  const wsUrl = `${node.url.replace('http', 'ws')}/ext/bc/X/pubsub`;
  const ws = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const messages: Array<{ channel: string; value: string }> = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  ws.send(JSON.stringify({ channel: 'accepted', unsubscribe: false }));
  await new Promise((r) => setTimeout(r, 50));
  const to = (await ok('X', 'avm.createAddress', USER)).address as string;
  const { txID } = await ok('X', 'avm.send', { ...USER, amount: 10, assetID: 'NATIVE', to });
  await until('the pubsub message', async () => (messages.some((m) => m.channel === 'accepted' && m.value === txID) ? true : undefined));
  ws.close();
  const refused = await new Promise<number>((resolve) => {
    const evil = new WebSocket(wsUrl, { headers: { origin: 'https://evil.example' } });
    evil.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    evil.once('open', () => resolve(101));
  });
  assert.is(refused, 403);
});

test('fixed-cap and variable-cap assets; a 2-of-3 mint signed per minter', async () => {
  const holder = (await ok('X', 'avm.createAddress', USER)).address as string;
  const { assetID: fixed } = await ok('X', 'avm.createFixedCapAsset', { ...USER, name: 'Fixed', symbol: 'FIX', denomination: 2, initialHolders: [{ address: holder, amount: 5_000 }] });
  await until('the fixed-cap asset', async () => ((await balance(holder, fixed)) === 5_000n ? true : undefined));
  assert.equal(await ok('X', 'avm.getAssetDescription', { assetID: fixed }), { assetID: fixed, name: 'Fixed', symbol: 'FIX', denomination: '2' });

  const minters: string[] = [];
  for (let i = 0; i < 3; i++) minters.push((await ok('X', 'avm.createAddress', USER)).address);
  const { assetID: variable } = await ok('X', 'avm.createVariableCapAsset', { ...USER, name: 'Minted', symbol: 'MNT', denomination: 0, minterSets: [{ minters, threshold: 2 }] });
  await until('the variable-cap asset', async () => ((await statusOf(variable)) === 'Accepted' ? true : undefined));
  const to = (await ok('X', 'avm.createAddress', USER)).address as string;
  let { tx } = await ok('X', 'avm.createMintTx', { amount: 777, assetID: variable, to, minters: [minters[0], minters[2]] });
  for (const minter of [minters[0], minters[2]]) tx = (await ok('X', 'avm.signMintTx', { ...USER, tx, minter })).tx;
  const { txID } = await ok('X', 'avm.issueTx', { tx });
  await accepted(txID);
  assert.is(await balance(to, variable), 777n);
});

test('a tx built and signed offline from getUTXOs is accepted', async () => {
  const { utxos } = await ok('X', 'avm.getUTXOs', { addresses: [EWOQ_X] });
  const utxo = (utxos as string[]).map((u) => decodeUtxo(cb58Decode(u))).find((u) => u.out.kind === 'transfer' && u.out.amount > 10_000n)!;
  const to = PrivateKey.generate().address;
  const { txID } = await ok('X', 'avm.issueTx', { tx: offlineTransfer(utxo, EWOQ, to, 2_500n) });
  await accepted(txID);
  assert.is(await balance(`X-${to}`), 2_500n);
});

test('a conflicting pair: both issued, one Accepted, the other Rejected', async () => {
  const { utxos } = await ok('X', 'avm.getUTXOs', { addresses: [EWOQ_X] });
  const utxo = (utxos as string[]).map((u) => decodeUtxo(cb58Decode(u))).find((u) => u.out.kind === 'transfer' && u.out.amount > 10_000n)!;
  const a = offlineTransfer(utxo, EWOQ, PrivateKey.generate().address, 1n);
  const b = offlineTransfer(utxo, EWOQ, PrivateKey.generate().address, 2n);
  // One JSON-RPC batch, so both are checked before either can be accepted (two separate requests
  // race: the first may be accepted before the second arrives, which is then refused as spent).
  const reply = await fetch(`${node.url}/ext/bc/X`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([a, b].map((tx, id) => ({ jsonrpc: '2.0', id, method: 'avm.issueTx', params: { tx } }))),
  });
  const [ra, rb] = ((await reply.json()) as Array<{ id: number; result?: { txID: string }; error?: unknown }>).sort((x, y) => x.id - y.id);
  if (!ra || !rb) throw new Error('expected two replies');
  const ids = [ra.result?.txID, rb.result?.txID].filter((x): x is string => typeof x === 'string');
  assert.is(ids.length, 2, `both issued: ${JSON.stringify([ra.error, rb.error])}`);
  const statuses = await until('both decided', async () => {
    const s = await Promise.all(ids.map(statusOf));
    return s.every((x) => x === 'Accepted' || x === 'Rejected') ? s : undefined;
  });
  assert.equal([...statuses].sort(), ['Accepted', 'Rejected']);
});

test('the native token X -> P -> X: balances right on both chains', async () => {
  // A user holding only the ewoq key, so every AVA it moves comes from (and returns to) that address.
  const USER = { username: 'yvonne', password: 'a Strong passw0rd!' };
  await ok('keystore', 'keystore.createUser', USER);
  await ok('X', 'avm.importKey', { ...USER, privateKey: EWOQ_KEY });
  const pAccount = (await ok('P', 'platform.createAccount', { ...USER, privateKey: EWOQ_KEY })).address as string;
  const p0 = BigInt((await ok('P', 'platform.getAccount', { address: pAccount })).balance);
  const x0 = await balance(EWOQ_X);
  const exp = await ok('X', 'avm.exportAVA', { ...USER, to: pAccount, amount: 40_000 });
  await accepted(exp.txID);
  assert.is(await balance(EWOQ_X), x0 - 40_000n);
  const nonce = Number((await ok('P', 'platform.getAccount', { address: pAccount })).nonce) + 1;
  const imp = await ok('P', 'platform.importAVA', { ...USER, to: pAccount, payerNonce: nonce });
  await ok('P', 'platform.issueTx', { tx: imp.tx });
  await until('P balance', async () => (BigInt((await ok('P', 'platform.getAccount', { address: pAccount })).balance) === p0 + 40_000n ? true : undefined));

  // Back: P -> X.
  const { unsignedTx } = await ok('P', 'platform.exportAVA', { to: EWOQ_X.slice(2), amount: 15_000, payerNonce: nonce + 1 });
  const { tx } = await ok('P', 'platform.sign', { ...USER, tx: unsignedTx, signer: pAccount });
  await ok('P', 'platform.issueTx', { tx });
  await until('P export', async () => (BigInt((await ok('P', 'platform.getAccount', { address: pAccount })).balance) === p0 + 25_000n ? true : undefined));
  const x1 = await balance(EWOQ_X);
  const back = await ok('X', 'avm.importAVA', { ...USER, to: EWOQ_X });
  await accepted(back.txID);
  assert.is(await balance(EWOQ_X), x1 + 15_000n);
});

test('30 txs of ~12 KB each in one JSON-RPC batch (gossiped together: 360 KB in one turn) are all accepted; the chain keeps running', async () => {
  const { utxos } = await ok('X', 'avm.getUTXOs', { addresses: [EWOQ_X] });
  const source = (utxos as string[]).map((u) => decodeUtxo(cb58Decode(u))).find((u) => u.out.kind === 'transfer' && u.out.amount > 1_000_000_000n)!;
  const holder = PrivateKey.generate();
  const split = offlineSplit(source, EWOQ, holder.address, Array(30).fill(1_000_000n));
  await ok('X', 'avm.issueTx', { tx: split.tx });
  await accepted(split.txID);
  const pieces = split.made.filter((u) => u.out.kind === 'transfer' && u.out.addresses[0]!.equals(holder.address));
  assert.is(pieces.length, 30);
  const big = pieces.map((u) => offlineSplit(u, holder, holder.address, Array(150).fill(5n)));
  assert.ok(cb58Decode(big[0]!.tx).length > 12_000, 'each tx is over 12 KB');
  const replies = (await (
    await fetch(`${node.url}/ext/bc/X`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(big.map(({ tx }, i) => ({ jsonrpc: '2.0', id: i, method: 'avm.issueTx', params: { tx } }))),
    })
  ).json()) as Array<{ result?: { txID: string }; error?: unknown }>;
  assert.equal(replies.filter((r) => r.error), []);
  for (const { txID } of big) await accepted(txID);
  const health = (await node.call('health', 'health.getLiveness')).result as { checks: Record<string, { message: { state?: string } }> };
  assert.is(health.checks['chain X']?.message.state, 'running');
});

test('lock-out (issue 32): ten free assets of 1,024 UTXOs each and 200 dust UTXOs sent to an address; its owner still reads and spends its AVA, pages through its UTXOs', async () => {
  const VICTIM = { username: 'victor', password: 'a Strong passw0rd!' };
  await ok('keystore', 'keystore.createUser', VICTIM);
  const victim = (await ok('X', 'avm.createAddress', VICTIM)).address as string;
  for (const amount of [1_000_000_000, 500_000]) await accepted((await ok('X', 'avm.send', { ...USER, amount, assetID: 'AVA', to: victim })).txID);
  // The attacker: ten unauthenticated, free createFixedCapAsset calls, every holder the victim.
  const junk: string[] = [];
  for (let k = 0; k < 10; k++) {
    const initialHolders = Array.from({ length: 1024 }, (_, i) => ({ address: victim, amount: i + 1 }));
    junk.push((await ok('X', 'avm.createFixedCapAsset', { name: `Junk ${k}`, symbol: 'JNK', denomination: 0, initialHolders })).assetID as string);
  }
  for (const assetID of junk) await accepted(assetID);
  // …and 200 UTXOs of 1 nAVA, from a key of its own funded with a little AVA.
  const attacker = PrivateKey.generate();
  await accepted((await ok('X', 'avm.send', { ...USER, amount: 10_000, assetID: 'AVA', to: `X-${attacker.address}` })).txID);
  const [funds] = ((await ok('X', 'avm.getUTXOs', { addresses: [`X-${attacker.address}`] })).utxos as string[]).map((u) => decodeUtxo(cb58Decode(u)));
  const dust = offlineSplit(funds!, attacker, ShortId.fromString(victim.slice(2)), Array(200).fill(1n));
  await ok('X', 'avm.issueTx', { tx: dust.tx });
  await accepted(dust.txID);

  // Reads answer, and only about what was asked.
  const held = 1_000_500_000n + 200n;
  const t0 = performance.now();
  const bal = await ok('X', 'avm.getBalance', { address: victim, assetID: 'AVA' });
  assert.is(bal.balance, held.toString());
  assert.is(bal.utxoIDs.length, 202);
  assert.ok(performance.now() - t0 < 2_000, `getBalance took ${performance.now() - t0} ms`);
  const one = await ok('X', 'avm.getBalance', { address: victim, assetID: junk[3] });
  assert.equal([one.balance, one.utxoIDs.length], [String((1024 * 1025) / 2), 1024]);
  assert.is((await ok('X', 'avm.getAllBalances', { address: victim })).balances.length, 11);
  // getUTXOs: the reference's form says there are too many and how to page; the pages hold them all, once each.
  const all = await node.call('X', 'avm.getUTXOs', { addresses: [victim] });
  assert.is(all.error?.code, -32000);
  assert.match(all.error?.message ?? '', /more than 10000 UTXOs.*page through them with limit and startIndex/);
  const seen = new Set<string>();
  let startIndex: unknown;
  for (let pages = 0; pages < 20; pages++) {
    const page = await ok('X', 'avm.getUTXOs', { addresses: [victim], limit: 1024, ...(startIndex ? { startIndex } : {}) });
    for (const u of page.utxos as string[]) seen.add(u);
    assert.is(page.numFetched, String(page.utxos.length));
    startIndex = page.endIndex;
    if (page.utxos.length < 1024) break;
  }
  assert.is(seen.size, 10 * 1024 + 2 + 200);

  // Spends work, from the big UTXOs (the dust is never needed): a send and an export.
  const sent = await ok('X', 'avm.send', { ...VICTIM, amount: 1_000_100_000, assetID: 'AVA', to: EWOQ_X });
  await accepted(sent.txID);
  const sentTx = decodeTx(cb58Decode((await ok('X', 'avm.getTx', { txID: sent.txID })).tx));
  assert.is(sentTx.unsigned.ins.length, 2);
  const exported = await ok('X', 'avm.exportAVA', { ...VICTIM, to: EWOQ.address.toString(), amount: 300_000 });
  await accepted(exported.txID);
  assert.is(await balance(victim), held - 1_000_100_000n - 300_000n);
  // What is left (~100,000 in one UTXO and the dust): 100,050 takes the big one and 50 dust.
  const rest = await ok('X', 'avm.send', { ...VICTIM, amount: 100_050, assetID: 'AVA', to: EWOQ_X });
  await accepted(rest.txID);
  assert.is(decodeTx(cb58Decode((await ok('X', 'avm.getTx', { txID: rest.txID })).tx)).unsigned.ins.length, 51);
});

test('the chain configs bound free txs: the timestamp chain (free-txs-per-minute 20 here) refuses the 21st proposal of the minute with -32000 and the seconds to wait', async () => {
  for (let i = 0; i < 20; i++) assert.equal((await node.call('timestamp', 'timestamp.proposeBlock', { data: cb58Encode(new Uint8Array(32).fill(i + 1)) })).result, { Success: true });
  const r = await node.call('timestamp', 'timestamp.proposeBlock', { data: cb58Encode(new Uint8Array(32).fill(99)) });
  assert.is(r.error?.code, -32000);
  assert.match(r.error?.message ?? '', /^free transactions on this chain are limited to 20 per minute; try again in \d+ s$/);
});

test.run();
