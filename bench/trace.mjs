// debug_traceTransaction on the C-Chain beside anvil (`--hardfork cancun`) started here in the same
// run, one node at a time. On each: BenchToken (an ERC-20) and a loop contract deployed, a 1M-gas
// loop tx, a 30M-gas one (the block gas limit if lower), then an ERC-20 transfer, so that it is in
// the latest block. Figures: callTracer traces/s of the transfer (sequential and from 4 concurrent
// clients) with p50/p99; the struct logger's (default options) traces/s and p50; the 1M-gas loop
// traced with each (ms); the 30M-gas loop with the struct logger: answered (ms, bytes) or refused
// (the error, ms), while a worker thread asks the cornice node's /ext/health every 20 ms.
// One JSON line per figure: cornice's value, anvil's beside it, the ratio cornice/anvil.
//   npm run bench:trace, or node bench/trace.mjs once built   (BENCH_QUICK=1: shorter series; BENCH_TRACE_CORNICE=0 / BENCH_TRACE_ANVIL=0: one side only)
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Interface, Wallet } from 'ethers';
import { TOKEN_BYTECODE } from './bench-token.mjs';
import { startAnvil, startCornice } from './evm.mjs';
import { report, sampleHealth } from './lib.mjs';

const tokenIface = new Interface(['constructor(uint256 supply)', 'function transfer(address to, uint256 value) returns (bool)']);

/**
 * The loop contract: any call runs `slot0 = slot0 + 1` (SLOAD, ADD, SSTORE) until less than 5,000
 * gas is left, then STOPs: a tx burns its gas limit (all but < 5,000) in ~234-gas iterations of 12
 * steps, so its gas limit is the parameter (1M gas ~ 51,000 struct logs, 30M ~ 1.5 million).
 *   runtime: JUMPDEST PUSH1 0 SLOAD PUSH1 1 ADD PUSH1 0 SSTORE PUSH2 5000 GAS GT PUSH1 0 JUMPI STOP
 */
const LOOP_RUNTIME = '5b600054600101600055611388' + '5a11600057' + '00';
const LOOP_INIT = `0x60${(LOOP_RUNTIME.length / 2).toString(16).padStart(2, '0')}600c60003960${(LOOP_RUNTIME.length / 2).toString(16).padStart(2, '0')}6000f3${LOOP_RUNTIME}`;
const LOOP_GAS = 1_000_000;
const HEAVY_GAS = 30_000_000;
/** The trace timeout: geth's default, which cornice applies when the config names none. */
const TRACE_TIMEOUT_MS = 5_000;
const CONCURRENT_CLIENTS = 4;
const HEALTH_EVERY_MS = 20;
/**
 * anvil as cornice's C-Chain runs (cancun), twice: its struct logger needs `--steps-tracing`
 * (without it anvil answers with no structLogs at all: it logs the steps while mining, and only
 * with the flag), and the flag costs its callTracer too (a 1M-gas loop: ~3 ms without, 60-130 ms
 * with, in runs here). So the callTracer figures come from an anvil without it, the struct
 * logger's from one with it: each baseline at its fastest.
 */
const ANVIL_CALL_TRACER_ARGS = ['--hardfork', 'cancun'];
const ANVIL_STRUCT_LOGGER_ARGS = ['--hardfork', 'cancun', '--steps-tracing'];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 2) => (x == null ? null : Number(x.toFixed(d)));
function percentile(xs, p) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}
const median = (xs) => percentile(xs, 0.5);

async function call(url, method, params) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const r = await res.json();
  if (r.error) throw new Error(`${method}: ${r.error.message} (${r.error.code})`);
  return r.result;
}

/**
 * One debug_traceTransaction, its reply read as a stream: ms to the last byte, bytes, and the
 * parsed reply only when it is at most `keepBytes` (a struct log of a 30M-gas loop is hundreds of
 * MB: counted, never held). `error` is the JSON-RPC error ({code, message}) of a refusal.
 */
async function trace(url, hash, config, { keepBytes = 16 << 20, timeoutMs = 60_000 } = {}) {
  const params = config === undefined ? [hash] : [hash, config];
  const t0 = performance.now();
  let bytes = 0;
  let chunks = [];
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'debug_traceTransaction', params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    for await (const chunk of res.body) {
      bytes += chunk.length;
      if (chunks && bytes <= keepBytes) chunks.push(chunk);
      else chunks = null;
    }
  } catch (e) {
    return { ms: performance.now() - t0, bytes, error: { code: null, message: `client: ${e.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : e.message}` } };
  }
  const ms = performance.now() - t0;
  if (!chunks) return { ms, bytes };
  let reply;
  try {
    reply = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    return { ms, bytes, error: { code: null, message: `client: unparsable reply (${e.message})` } };
  }
  return reply.error ? { ms, bytes, error: reply.error } : { ms, bytes, result: reply.result };
}

const describe = (error) => (error.code === -32601 ? `debug_traceTransaction not served (-32601): ${error.message}` : `debug_traceTransaction failed${error.code == null ? '' : ` (${error.code})`}: ${error.message}`);

/** Deploys the token and the loop contract, sends the two loop txs, then the transfer (last: the latest block). */
async function prepare(node) {
  const wallet = new Wallet(node.key);
  const chainId = Number(await call(node.url, 'eth_chainId', []));
  const gasPrice = BigInt(await call(node.url, 'eth_gasPrice', [])) * 2n;
  const blockGasLimit = Number(BigInt((await call(node.url, 'eth_getBlockByNumber', ['latest', false])).gasLimit));
  let nonce = Number(await call(node.url, 'eth_getTransactionCount', [wallet.address, 'pending']));
  const send = async (tx) => {
    const raw = await wallet.signTransaction({ type: 0, chainId, gasPrice, nonce: nonce++, value: 0n, ...tx });
    const hash = await call(node.url, 'eth_sendRawTransaction', [raw]);
    const t0 = performance.now();
    for (;;) {
      const r = await call(node.url, 'eth_getTransactionReceipt', [hash]);
      if (r) {
        if (r.status !== '0x1') throw new Error(`tx ${hash} failed (status ${r.status})`);
        return r;
      }
      if (performance.now() - t0 > 180_000) throw new Error(`tx ${hash} not mined in 180 s`);
      await sleep(10);
    }
  };
  const token = (await send({ data: TOKEN_BYTECODE + tokenIface.encodeDeploy([10n ** 30n]).slice(2), gasLimit: 1_500_000n })).contractAddress;
  const loop = (await send({ data: LOOP_INIT, gasLimit: 200_000n })).contractAddress;
  const heavyGas = Math.min(HEAVY_GAS, blockGasLimit);
  const loop1m = await send({ to: loop, gasLimit: BigInt(LOOP_GAS) });
  const heavy = await send({ to: loop, gasLimit: BigInt(heavyGas) });
  const transfer = await send({ to: token, data: tokenIface.encodeFunctionData('transfer', ['0x' + '42'.repeat(20), 1000n]), gasLimit: 100_000n });
  const latest = await call(node.url, 'eth_blockNumber', []);
  if (latest !== transfer.blockNumber) throw new Error(`the transfer is in block ${transfer.blockNumber}, the latest is ${latest}`);
  return {
    blockGasLimit,
    heavyGas,
    gasUsed: { transfer: Number(BigInt(transfer.gasUsed)), loop1m: Number(BigInt(loop1m.gasUsed)), heavy: Number(BigInt(heavy.gasUsed)) },
    hashes: { transfer: transfer.transactionHash, loop1m: loop1m.transactionHash, heavy: heavy.transactionHash },
  };
}

/** `clients` loops of `n` traces each at once (each its own connection, as fetch opens them): traces/s, p50/p99 ms. */
async function timed(url, hash, config, { clients, n }) {
  const lat = [];
  let errors = 0;
  let firstError;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = 0; i < n; i++) {
        const r = await trace(url, hash, config);
        if (r.error) {
          errors++;
          firstError ??= describe(r.error);
        } else lat.push(r.ms);
      }
    }),
  );
  return summary(lat, performance.now() - t0, errors, firstError);
}

/** `n` traces one after another after `warmup` untimed ones. */
async function sequential(url, hash, config, { n, warmup }) {
  for (let i = 0; i < warmup; i++) await trace(url, hash, config);
  return timed(url, hash, config, { clients: 1, n });
}

async function concurrent(url, hash, config, { clients, n }) {
  return { clients, ...(await timed(url, hash, config, { clients, n })) };
}

function summary(lat, wallMs, errors, firstError) {
  return {
    tracesPerSec: lat.length ? round((lat.length * 1000) / wallMs, 1) : null,
    p50ms: round(median(lat)),
    p99ms: round(percentile(lat, 0.99)),
    n: lat.length,
    ...(errors ? { errors, error: firstError } : {}),
  };
}

/** `reps` traces of one tx after one untimed: the median ms, the bytes, and the last reply's size in steps or frames. */
async function repeated(url, hash, config, reps) {
  const first = await trace(url, hash, config, { keepBytes: 64 << 20 });
  if (first.error) return { error: describe(first.error), ms: round(first.ms) };
  const ms = [];
  let last;
  for (let i = 0; i < reps; i++) {
    last = await trace(url, hash, config, { keepBytes: 0 });
    if (last.error) return { error: describe(last.error), ms: round(last.ms) };
    ms.push(last.ms);
  }
  return { ms: round(median(ms)), runs: ms.map((x) => round(x, 1)), bytes: last.bytes, ...shape(first.result) };
}

/** What a reply holds, to see that both nodes traced the same thing: struct logs and gas, or call frames. */
function shape(result) {
  if (!result) return {};
  if (Array.isArray(result.structLogs)) return { structLogs: result.structLogs.length, gas: result.gas, failed: result.failed };
  const frames = (f) => 1 + (f.calls ?? []).reduce((a, c) => a + frames(c), 0);
  return { frames: frames(result), gasUsed: Number(BigInt(result.gasUsed)), type: result.type };
}

/** Samples GET /ext/health every HEALTH_EVERY_MS from a worker thread (health-sampler.mjs) until the returned stop(). */
function healthSampler(node) {
  const stop = sampleHealth({ url: node.baseUrl, pid: node.pid, intervalMs: HEALTH_EVERY_MS });
  return async () => {
    const { lat, rss } = await stop();
    return { p50ms: round(median(lat), 1), p99ms: round(percentile(lat, 0.99), 1), maxMs: round(Math.max(...lat), 1), samples: lat.length, rssMaxMb: Math.round(rss) };
  };
}

/**
 * The struct logger (default options) of the heavy loop, once: answered (ms, bytes) or refused (the
 * error, ms). On a node with /ext/health, health is sampled meanwhile, and for 1 s before as the idle figure.
 */
async function heavyTrace(node, hash) {
  let idle;
  let during;
  if (node.baseUrl) {
    const stopIdle = healthSampler(node);
    await sleep(1_000);
    idle = await stopIdle();
  }
  const stop = node.baseUrl ? healthSampler(node) : null;
  // A node past its timeout should have answered by 5 s; the client waits far longer, to see how long it really takes.
  const r = await trace(node.url, hash, undefined, { keepBytes: 1 << 20, timeoutMs: 180_000 });
  if (stop) during = await stop();
  const out = { ms: round(r.ms, 1), bytes: r.bytes };
  if (r.error) Object.assign(out, { outcome: 'refused', error: r.error.message, code: r.error.code });
  else Object.assign(out, { outcome: 'answered', ...(r.result ? shape(r.result) : {}) });
  if (during) out.health = { ...during, idle };
  return out;
}

/** Everything on one node, or the `parts` named (`callTracer`, `structLogger`): setup, then each figure (a node that does not serve the method: its error, no figures). */
async function onTarget(start, { quick }, parts = ['callTracer', 'structLogger']) {
  let node;
  try {
    node = await start();
  } catch (e) {
    return { error: `start: ${e.message}` };
  }
  try {
    const setup = await prepare(node);
    const { transfer, loop1m, heavy } = setup.hashes;
    const probe = await trace(node.url, transfer, parts.includes('callTracer') ? { tracer: 'callTracer' } : undefined);
    if (probe.error) return { version: node.version, setup, error: describe(probe.error) };
    const out = { version: node.version, setup, erc20: {}, loop1m: {} };
    if (parts.includes('callTracer')) {
      out.erc20.callTracerShape = shape(probe.result);
      // Steady state: V8 compiles the EVM's hot paths over the first few hundred traces (in-process, a
      // trace falls from ~11 ms to ~0.3 ms by the 300th), anvil is compiled ahead of time; both sides
      // get the same untimed warm-up.
      out.erc20.callTracer = await sequential(node.url, transfer, { tracer: 'callTracer' }, { n: quick ? 60 : 300, warmup: quick ? 10 : 500 });
      out.erc20.callTracerConcurrent = await concurrent(node.url, transfer, { tracer: 'callTracer' }, { clients: CONCURRENT_CLIENTS, n: quick ? 15 : 75 });
      out.loop1m.callTracer = await repeated(node.url, loop1m, { tracer: 'callTracer' }, quick ? 2 : 5);
    }
    if (parts.includes('structLogger')) {
      const structProbe = await trace(node.url, transfer, undefined);
      out.erc20.structLoggerShape = structProbe.error ? { error: describe(structProbe.error) } : { ...shape(structProbe.result), bytes: structProbe.bytes };
      out.erc20.structLogger = await sequential(node.url, transfer, undefined, { n: quick ? 40 : 200, warmup: quick ? 5 : 300 });
      out.loop1m.structLogger = await repeated(node.url, loop1m, undefined, quick ? 1 : 3);
      out.heavy = await heavyTrace(node, heavy);
    }
    return out;
  } catch (e) {
    return { version: node.version, error: e.message };
  } finally {
    await node.stop();
  }
}

/** One result from the two anvil runs: the callTracer figures of the first, the struct logger's of the second. */
function mergeAnvil(call, struct) {
  const errors = [call.error && `callTracer run (${ANVIL_CALL_TRACER_ARGS.join(' ')}): ${call.error}`, struct.error && `struct logger run (${ANVIL_STRUCT_LOGGER_ARGS.join(' ')}): ${struct.error}`].filter(Boolean);
  return {
    version: call.version ?? struct.version,
    setup: struct.setup ?? call.setup,
    erc20: { ...call.erc20, ...struct.erc20 },
    loop1m: { ...call.loop1m, ...struct.loop1m },
    heavy: struct.heavy,
    ...(errors.length ? { error: errors.join('; ') } : {}),
  };
}

const ratio = (c, a) => (typeof c === 'number' && typeof a === 'number' && a > 0 ? round(c / a, 2) : null);

/**
 * `cornice: false` / `anvil: false` (BENCH_TRACE_CORNICE=0 / BENCH_TRACE_ANVIL=0 when run alone)
 * leave that side out; `startCornice` starts cornice's side another way (other flags or chain config),
 * resolving as evm.mjs's startCornice does.
 */
export async function benchTrace({ quick = false, cornice: withCornice = true, anvil: withAnvil = true, startCornice: start = startCornice } = {}) {
  const load = loadavg()[0];
  const c = withCornice ? await onTarget(start, { quick }) : { error: 'not run' };
  const a = withAnvil
    ? mergeAnvil(await onTarget(() => startAnvil(ANVIL_CALL_TRACER_ARGS), { quick }, ['callTracer']), await onTarget(() => startAnvil(ANVIL_STRUCT_LOGGER_ARGS), { quick }, ['structLogger']))
    : { error: 'not run' };
  const common = {
    anvilVersion: a.version ?? null,
    anvilFlags: { callTracer: ANVIL_CALL_TRACER_ARGS.join(' '), structLogger: ANVIL_STRUCT_LOGGER_ARGS.join(' ') },
    gas: { loop: LOOP_GAS, heavy: { cornice: c.setup?.heavyGas ?? null, anvil: a.setup?.heavyGas ?? null }, blockGasLimit: { cornice: c.setup?.blockGasLimit ?? null, anvil: a.setup?.blockGasLimit ?? null } },
    loadavg1AtStart: round(load),
    ...(c.error ? { error: c.error } : {}),
    ...(a.error ? { anvilError: a.error } : {}),
  };
  const pick = (r, path) => path.split('.').reduce((x, k) => x?.[k], r) ?? null;
  const side = (path) => ({ value: pick(c, path), anvil: pick(a, path), ratioToAnvil: ratio(pick(c, path), pick(a, path)) });

  const ct = side('erc20.callTracer.p50ms');
  report({
    bench: 'debug_traceTransaction callTracer of an ERC-20 transfer in the latest block, p50',
    ...ct,
    unit: 'ms',
    target: 'within 2x of anvil (ratioToAnvil <= 2)',
    meetsTarget: ct.ratioToAnvil == null ? null : ct.ratioToAnvil <= 2,
    p99ms: side('erc20.callTracer.p99ms'),
    tracesPerSec: side('erc20.callTracer.tracesPerSec'),
    concurrent: { clients: CONCURRENT_CLIENTS, tracesPerSec: side('erc20.callTracerConcurrent.tracesPerSec'), p50ms: side('erc20.callTracerConcurrent.p50ms'), p99ms: side('erc20.callTracerConcurrent.p99ms') },
    shape: { cornice: pick(c, 'erc20.callTracerShape'), anvil: pick(a, 'erc20.callTracerShape') },
    errors: errorsOf(c, a, ['erc20.callTracer', 'erc20.callTracerConcurrent']),
    ...common,
  });
  report({
    bench: 'debug_traceTransaction struct logger (default options) of an ERC-20 transfer in the latest block, p50',
    ...side('erc20.structLogger.p50ms'),
    unit: 'ms',
    p99ms: side('erc20.structLogger.p99ms'),
    tracesPerSec: side('erc20.structLogger.tracesPerSec'),
    shape: { cornice: pick(c, 'erc20.structLoggerShape'), anvil: pick(a, 'erc20.structLoggerShape') },
    errors: errorsOf(c, a, ['erc20.structLogger']),
    ...common,
  });
  for (const [tracer, name] of [
    ['callTracer', 'callTracer'],
    ['structLogger', 'struct logger (default options)'],
  ]) {
    report({
      bench: `debug_traceTransaction ${name} of a ${LOOP_GAS.toLocaleString('en')}-gas loop tx`,
      ...side(`loop1m.${tracer}.ms`),
      unit: 'ms (median)',
      runs: { cornice: pick(c, `loop1m.${tracer}.runs`), anvil: pick(a, `loop1m.${tracer}.runs`) },
      bytes: { cornice: pick(c, `loop1m.${tracer}.bytes`), anvil: pick(a, `loop1m.${tracer}.bytes`) },
      shape: { cornice: shapeOf(pick(c, `loop1m.${tracer}`)), anvil: shapeOf(pick(a, `loop1m.${tracer}`)) },
      errors: errorsOf(c, a, [`loop1m.${tracer}`]),
      ...common,
    });
  }
  const h = c.heavy;
  report({
    bench: 'debug_traceTransaction struct logger (default options) of a 30M-gas loop tx: answered or refused, with /ext/health meanwhile',
    value: h?.ms ?? null,
    unit: 'ms',
    target: `an answer or a refusal within the trace timeout (${TRACE_TIMEOUT_MS} ms); /ext/health < 100 ms meanwhile (every ${HEALTH_EVERY_MS} ms, from a worker thread)`,
    meetsTarget: h ? h.ms <= TRACE_TIMEOUT_MS && h.health?.maxMs < 100 : null,
    outcome: h?.outcome ?? null,
    ...(h?.outcome === 'refused' ? { refusal: h.error, code: h.code } : {}),
    bytes: h?.bytes ?? null,
    health: h?.health ?? null,
    anvil: a.heavy ? { ms: a.heavy.ms, outcome: a.heavy.outcome, bytes: a.heavy.bytes, ...(a.heavy.error ? { refusal: a.heavy.error } : {}), ...(a.heavy.structLogs ? { structLogs: a.heavy.structLogs } : {}) } : null,
    gasUsed: { cornice: c.setup?.gasUsed.heavy ?? null, anvil: a.setup?.gasUsed.heavy ?? null },
    ...common,
  });
  const failed = [c.error && `cornice: ${c.error}`, a.error && `anvil: ${a.error}`].filter(Boolean);
  if (failed.length) process.stderr.write(`trace bench: ${failed.join('; ')}\n`);
}

const shapeOf = (r) => (r ? Object.fromEntries(Object.entries(r).filter(([k]) => ['structLogs', 'gas', 'failed', 'frames', 'gasUsed', 'type'].includes(k))) : null);

/** The figures' own errors on each side (a whole side's error is in `error` / `anvilError`), or undefined. */
function errorsOf(c, a, paths) {
  const out = {};
  for (const [k, r] of [
    ['cornice', c],
    ['anvil', a],
  ]) {
    const es = paths.map((p) => p.split('.').reduce((x, key) => x?.[key], r)?.error).filter(Boolean);
    if (es.length) out[k] = es.join('; ');
  }
  return Object.keys(out).length ? out : undefined;
}

// `node bench/trace.mjs` runs this bench alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await benchTrace({ quick: process.env.BENCH_QUICK === '1', cornice: process.env.BENCH_TRACE_CORNICE !== '0', anvil: process.env.BENCH_TRACE_ANVIL !== '0' });
}
