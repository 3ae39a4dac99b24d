#!/usr/bin/env node
// Backend sequential 1-tx blocks: admit -> build -> verify -> accept -> receipt, medians per phase over the
// last N-100 rounds (LevelDB store). `N=600 node plugins/evm/bench/seq-bench.mjs`; WT=<checkout> for A/B.
const WT = process.env.WT ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, '');
const E = `${WT}/plugins/evm`;
const { LevelStore } = await import(`${WT}/core/dist/src/index.js`);
const { addr, signedTx, startVM } = await import(`${E}/dist/test/helpers.js`);
const { Executor } = await import(`${E}/dist/src/chain/executor.js`);
const { MerkleStateManager } = await import(`${WT}/node_modules/@ethereumjs/statemanager/dist/esm/index.js`);
const { mkdtemp, rm } = await import('node:fs/promises');
const { tmpdir } = await import('node:os');
const { join } = await import('node:path');
const st = new Map(); const add = (k, ms) => { (st.get(k) ?? st.set(k, []).get(k)).push(ms); };
function wrap(proto, name, label) { const f = proto[name]; proto[name] = async function (...a) { const t = performance.now(); try { return await f.apply(this, a); } finally { add(label, performance.now() - t); } }; }
wrap(MerkleStateManager.prototype, 'getStateRoot', 'sm.getStateRoot');
wrap(MerkleStateManager.prototype, 'commit', 'sm.commit');
wrap(Executor.prototype, 'build', 'exec.build');
const dir = await mkdtemp(join(tmpdir(), 'evm-seq-bench-'));
const db = await LevelStore.open(dir);
const vm = await startVM({ db });
const be = vm.backend;
const N = Number(process.env.N ?? 400);
const raws = Array.from({ length: N }, (_, i) => signedTx({ nonce: BigInt(i), to: addr(1 + (i % 64)), value: 1000n }).serialize());
const T = (k, t) => add(k, performance.now() - t);
for (let i = 0; i < N; i++) {
  if (i === 100) st.clear();
  let t = performance.now(); const t0 = t;
  const h = await be.sendRawTransaction(raws[i]); T('admit', t); t = performance.now();
  const b = await vm.buildBlock(); T('buildBlock', t); t = performance.now();
  await b.verify(); await vm.setPreference(b.id); T('verify+pref', t); t = performance.now();
  await b.accept(); T('accept', t); t = performance.now();
  const r = await be.receipt(h); T('receipt', t); T('total', t0);
  if (!r) throw new Error('no receipt');
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const [k, v] of st) console.log(k.padEnd(16), 'p50', med(v).toFixed(3), 'ms  avg', (v.reduce((a, b) => a + b, 0) / v.length).toFixed(3));
await vm.shutdown();
if (db.close) await db.close();
if (dir) await rm(dir, { recursive: true, force: true });
