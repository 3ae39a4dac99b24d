#!/usr/bin/env node
// Backend eth_call of the node bench's ERC-20 (balanceOf), 32 in flight: calls/s and CPU us per call;
// beside it, the same for a contract whose code is one STOP and for an address with no code (what
// running any code costs, and GC's share of each).
// `N=20000 node plugins/evm/bench/call-bench.mjs`; WT=<checkout> for A/B.
const WT = process.env.WT ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, '');
const E = `${WT}/plugins/evm`;
const { readFileSync } = await import('node:fs');
const { MemoryStore } = await import(`${WT}/sdk/dist/src/index.js`);
const { EWOQ, buildAndAccept, signedTx, startVM } = await import(`${E}/dist/test/helpers.js`);
const src = readFileSync(`${WT}/bench/evm-rpc-bench.mjs`, 'utf8');
const code = eval(src.slice(src.indexOf('const TOKEN_BYTECODE =') + 'const TOKEN_BYTECODE ='.length, src.indexOf(';', src.indexOf('const TOKEN_BYTECODE ='))));
const hexToBytes = (h) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const supply = (10n ** 30n).toString(16).padStart(64, '0');
const vm = await startVM({ db: new MemoryStore() });
const be = vm.backend;
const h = await be.sendRawTransaction(signedTx({ nonce: 0n, data: hexToBytes(code + supply), gas: 2_000_000n }).serialize());
await buildAndAccept(vm);
const to = (await be.receipt(h)).contractAddress;
const data = hexToBytes('70a08231' + '00'.repeat(12) + Buffer.from(EWOQ).toString('hex'));
const N = Number(process.env.N ?? 20000);
// A contract whose code is STOP: initcode copying one byte (0x00) and returning it.
const hs = await be.sendRawTransaction(signedTx({ nonce: 1n, data: Uint8Array.from([0x60, 1, 0x60, 12, 0x60, 0, 0x39, 0x60, 1, 0x60, 0, 0xf3, 0x00]), gas: 200_000n }).serialize());
await buildAndAccept(vm);
const stop = (await be.receipt(hs)).contractAddress;
const { PerformanceObserver } = await import('node:perf_hooks');
let gcMs = 0;
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcMs += e.duration; }).observe({ entryTypes: ['gc'] });
/** The gc entries arrive after the calls' microtasks: counting before and after each timed loop needs them in. */
const gcEntriesIn = () => new Promise((r) => setTimeout(r, 50));
for (const [name, req] of [['ERC20 balanceOf', { to, data }], ['a contract whose code is STOP', { to: stop }], ['an address with no code', { to: new Uint8Array(20).fill(0x77) }]]) {
  for (let i = 0; i < 3000; i++) await be.call(req, 'latest');
  await gcEntriesIn();
  const c0 = process.cpuUsage(); const t0 = performance.now(); const g0 = gcMs;
  for (let i = 0; i < N; i += 32) await Promise.all(Array.from({ length: 32 }, () => be.call(req, 'latest')));
  const ms = performance.now() - t0; const cu = process.cpuUsage(c0);
  await gcEntriesIn();
  console.log(`eth_call ${name}, 32 in flight: ${(N / ms * 1000).toFixed(0)}/s, cpu ${((cu.user + cu.system) / N).toFixed(1)} us/call, GC pauses ${(((gcMs - g0) / ms) * 100).toFixed(0)} % of the time`);
}
await vm.shutdown();
