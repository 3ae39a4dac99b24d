#!/usr/bin/env node
// Backend eth_call of the node bench's ERC-20 (balanceOf), 32 in flight: calls/s and CPU us per call.
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
const to0 = process.env.EMPTY ? new Uint8Array(20).fill(0x11) : null; const data = hexToBytes('70a08231' + '00'.repeat(12) + Buffer.from(EWOQ).toString('hex'));
const N = Number(process.env.N ?? 20000);
for (let i = 0; i < 3000; i++) await be.call(to0 ? { to: to0 } : { to, data }, 'latest');
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < N; i += 32) await Promise.all(Array.from({ length: 32 }, () => be.call(to0 ? { to: to0 } : { to, data }, 'latest')));
const ms = performance.now() - t0; const cu = process.cpuUsage(c0);
console.log(`eth_call ERC20 balanceOf, 32 in flight: ${(N / ms * 1000).toFixed(0)}/s, cpu ${((cu.user + cu.system) / N).toFixed(1)} us/call`);
await vm.shutdown();
