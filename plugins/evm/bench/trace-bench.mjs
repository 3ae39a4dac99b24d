#!/usr/bin/env node
// Backend debug_traceTransaction of an ERC-20 transfer (BenchToken, the node bench's token), no HTTP:
// rounds of N traces one after another, each round's wall and CPU us per trace. The first rounds
// show V8 compiling the trace path; the later ones the steady state bench/trace.mjs measures over HTTP.
// `N=2000 R=8 TRACER=callTracer node plugins/evm/bench/trace-bench.mjs` (TRACER=struct: the struct logger); WT=<checkout> for A/B.
const WT = process.env.WT ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, '');
const { MemoryStore } = await import(`${WT}/sdk/dist/src/index.js`);
const { buildAndAccept, signedTx, startVM } = await import(`${WT}/plugins/evm/dist/test/helpers.js`);
const { TOKEN_BYTECODE } = await import(`${WT}/bench/bench-token.mjs`);
const hexToBytes = (h) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const word = (n) => n.toString(16).padStart(64, '0');
const vm = await startVM({ db: new MemoryStore() });
const be = vm.backend;
const deploy = await be.sendRawTransaction(signedTx({ nonce: 0n, data: hexToBytes(TOKEN_BYTECODE + word(10n ** 30n)), gas: 2_000_000n }).serialize());
await buildAndAccept(vm);
const token = (await be.receipt(deploy)).contractAddress;
// transfer(0x4242…42, 1000)
const transfer = await be.sendRawTransaction(signedTx({ nonce: 1n, to: token, data: hexToBytes(`a9059cbb${'00'.repeat(12)}${'42'.repeat(20)}${word(1000n)}`), gas: 100_000n }).serialize());
await buildAndAccept(vm);
const tracer = process.env.TRACER ?? 'callTracer';
const req = { ...(tracer === 'struct' ? {} : { tracer }), logger: {}, timeoutMs: 5_000, maxChars: 1 << 26 };
const N = Number(process.env.N ?? 2000);
for (let r = 0; r < Number(process.env.R ?? 8); r++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await be.traceTransaction(transfer, req);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  console.log(`${tracer} round ${r}: ${((ms / N) * 1000).toFixed(0)} us/trace, cpu ${((cpu.user + cpu.system) / N).toFixed(0)} us/trace`);
}
await vm.shutdown();
