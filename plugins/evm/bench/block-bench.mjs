#!/usr/bin/env node
// Backend blocks as the node's pipelined bench makes them: 64 senders, one tx each per block (64-tx blocks),
// rounds of admit -> build -> verify -> accept -> 64 receipts; per-block wall ms per phase and CPU ms per
// block (the last ROUNDS-10 rounds). Run after `npx tsc -b`: `ROUNDS=50 node plugins/evm/bench/block-bench.mjs`.
// WT=<another checkout> measures that tree instead (A/B runs).
const WT = process.env.WT ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, '');
const E = `${WT}/plugins/evm`;
const { MemoryStore } = await import(`${WT}/sdk/dist/src/index.js`).catch(() => import('@cornice/sdk'));
const { LevelStore } = await import(`${WT}/core/dist/src/index.js`);
const { EWOQ, addr, buildAndAccept, key, signedTx, startVM, GWEI } = await import(`${E}/dist/test/helpers.js`);
const { addressOfKey } = await import(`${E}/dist/src/chain/crypto.js`);
const { MerkleStateManager } = await import(`${WT}/node_modules/@ethereumjs/statemanager/dist/esm/index.js`);
const { MerklePatriciaTrie } = await import(`${WT}/node_modules/@ethereumjs/mpt/dist/esm/index.js`);
const { Executor } = await import(`${E}/dist/src/chain/executor.js`);
const { mkdtemp, rm } = await import('node:fs/promises');
const { tmpdir } = await import('node:os');
const { join } = await import('node:path');
const st = new Map(); const add = (k, ms) => { const s = st.get(k) ?? { n: 0, ms: 0 }; s.n++; s.ms += ms; st.set(k, s); };
function wrap(proto, name, label) { const f = proto[name]; proto[name] = async function (...a) { const t = performance.now(); try { return await f.apply(this, a); } finally { add(label, performance.now() - t); } }; }
wrap(MerkleStateManager.prototype, 'getStateRoot', 'sm.getStateRoot');
wrap(Executor.prototype, 'build', 'exec.build');
let puts = 0; const op = MerklePatriciaTrie.prototype.put; MerklePatriciaTrie.prototype.put = function (...a) { puts++; return op.apply(this, a); };
const dir = process.env.DB === 'memory' ? undefined : await mkdtemp(join(tmpdir(), 'evm-block-bench-'));
const db = dir ? await LevelStore.open(dir) : new MemoryStore();
const vm = await startVM({ db });
const be = vm.backend;
const S = 64, ROUNDS = Number(process.env.ROUNDS ?? 40);
const keys = Array.from({ length: S }, (_, i) => key(100 + i));
for (const [i, k] of keys.entries()) await be.sendRawTransaction(signedTx({ nonce: BigInt(i), to: addressOfKey(k), value: 10n ** 22n }).serialize());
while (vm.chain.mempool.size) await buildAndAccept(vm);
const rounds = Array.from({ length: ROUNDS }, (_, r) => keys.map((k, s) => signedTx({ key: k, nonce: BigInt(r), to: addr(1000 + ((r * S + s) % 64)), value: 1000n, maxFee: 80n * GWEI }).serialize()));
const T = (k, t) => add(k, performance.now() - t);
let cpu0;
for (const [r, raws] of rounds.entries()) {
  if (r === 10) { st.clear(); puts = 0; cpu0 = process.cpuUsage(); globalThis.__w0 = performance.now(); }
  let t = performance.now();
  const hashes = await Promise.all(raws.map((raw) => be.sendRawTransaction(raw)));
  T('admit64', t); t = performance.now();
  const b = await vm.buildBlock(); T('buildBlock', t); t = performance.now();
  await b.verify(); T('verify', t); t = performance.now();
  await vm.setPreference?.(b.id); T('setPref', t); t = performance.now();
  await b.accept(); T('accept', t); t = performance.now();
  for (const h of hashes) await be.receipt(h); T('receipts64', t);
}
const n = ROUNDS - 10; const cu = process.cpuUsage(cpu0); console.log(`TOTAL per block: cpu ${((cu.user + cu.system) / 1000 / n).toFixed(1)} ms, wall ${((performance.now() - globalThis.__w0) / n).toFixed(1)} ms`);
console.log(`per block (64 tx), avg of ${n}; trie puts/block ${(puts / n).toFixed(0)}`);
for (const [k, s] of st) console.log(k.padEnd(16), (s.ms / n).toFixed(2), 'ms');
await vm.shutdown();
if (db.close) await db.close();
if (dir) await rm(dir, { recursive: true, force: true });
