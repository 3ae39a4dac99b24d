// debug_traceTransaction on the C-Chain beside anvil (`--hardfork cancun`) started here in the same
// run, all up at once (cornice and two anvils, see ANVIL_*_ARGS). On each: BenchToken (an ERC-20) and
// a loop contract deployed, a 1M-gas loop tx, a 30M-gas one (the block gas limit if lower), then an
// ERC-20 transfer, so that it is in the latest block. Figures: callTracer traces/s of the transfer
// with p50/p99, sequential (after a warm-up, interleaved with anvil's: see interleaved()) and from 4
// concurrent clients; the struct logger's (default options) the same way, sequential only; the 1M-gas
// loop traced with each (ms); the 30M-gas loop with the struct logger: answered (ms, bytes) or
// refused (the error, ms), while a worker thread asks the cornice node's /ext/health every 20 ms.
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

/**
 * The trace of the transfer on each of `sides` (ready()'s) in turn, `rounds` rounds of `perRound`
 * each, after `warmup` untimed ones on each: per side, traces/s and p50/p99 of its timed traces, and
 * the p50 of its untimed ones (`warmup`: a node still compiling its trace path). Interleaved, the
 * targets are timed under the same load and CPU placement of the machine, which drift over a run
 * (one after the other, a node's p50 moved by ~30 % between runs here).
 */
async function interleaved(sides, config, { rounds, perRound, warmup }) {
  const targets = sides.map((side) => ({ url: side.node.url, hash: side.setup.hashes.transfer }));
  const warm = [];
  for (const { url, hash } of targets) {
    const lat = [];
    for (let i = 0; i < warmup; i++) lat.push((await trace(url, hash, config)).ms);
    warm.push({ traces: warmup, p50ms: round(median(lat)) });
  }
  const runs = targets.map(() => ({ lat: [], wallMs: 0, errors: 0, firstError: undefined }));
  for (let r = 0; r < rounds; r++) {
    for (const [i, { url, hash }] of targets.entries()) {
      const run = runs[i];
      const t0 = performance.now();
      for (let k = 0; k < perRound; k++) {
        const t = await trace(url, hash, config);
        if (t.error) {
          run.errors++;
          run.firstError ??= describe(t.error);
        } else run.lat.push(t.ms);
      }
      run.wallMs += performance.now() - t0;
    }
  }
  return runs.map((run, i) => ({ ...summary(run.lat, run.wallMs, run.errors, run.firstError), rounds, warmup: warm[i] }));
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

/** A node started and prepared (prepare()), with the result its figures go into; or the start's or setup's error. */
async function ready(start) {
  let node;
  try {
    node = await start();
  } catch (e) {
    return { out: { error: `start: ${e.message}` } };
  }
  try {
    const setup = await prepare(node);
    return { node, setup, out: { version: node.version, setup, erc20: {}, loop1m: {} } };
  } catch (e) {
    await node.stop();
    return { out: { version: node.version, error: e.message } };
  }
}

/** The sides that serve `config`'s trace of their transfer (the first trace's shape kept as `shapeKey`); the others get the error. */
async function serving(sides, config, shapeKey) {
  const ok = [];
  for (const side of sides) {
    if (!side.node) continue;
    const probe = await trace(side.node.url, side.setup.hashes.transfer, config);
    if (probe.error) side.out.error ??= describe(probe.error);
    else {
      side.out.erc20[shapeKey] = { ...shape(probe.result), bytes: probe.bytes };
      ok.push(side);
    }
  }
  return ok;
}

/**
 * All figures, with the nodes up together (cornice and the two anvils, each idle while another is
 * measured): the ERC-20 series interleaved between cornice and the anvil of that tracer, the others
 * one node after the other.
 */
async function measure({ quick, withCornice, withAnvil, start }) {
  const none = { out: { error: 'not run' } };
  const c = withCornice ? await ready(start) : none;
  const ac = withAnvil ? await ready(() => startAnvil(ANVIL_CALL_TRACER_ARGS)) : none;
  const as = withAnvil ? await ready(() => startAnvil(ANVIL_STRUCT_LOGGER_ARGS)) : none;
  try {
    const callTracer = { tracer: 'callTracer' };
    const forCall = await serving([c, ac], callTracer, 'callTracerShape');
    // Steady state on both sides: anvil is compiled ahead of time; cornice's node gets faster until
    // V8 has compiled its trace path, ~2,500 traces of this transfer (plugins/evm/bench/trace-bench.mjs
    // shows it without HTTP). Both get the same untimed warm-up.
    const seq = await interleaved(forCall, callTracer, { rounds: 10, perRound: quick ? 10 : 100, warmup: quick ? 300 : 3_000 });
    for (const [i, side] of forCall.entries()) {
      const { url } = side.node;
      const { transfer, loop1m } = side.setup.hashes;
      side.out.erc20.callTracer = seq[i];
      side.out.erc20.callTracerConcurrent = await concurrent(url, transfer, callTracer, { clients: CONCURRENT_CLIENTS, n: quick ? 15 : 75 });
      side.out.loop1m.callTracer = await repeated(url, loop1m, callTracer, quick ? 2 : 5);
    }
    const forStruct = await serving([c, as], undefined, 'structLoggerShape');
    const structSeq = await interleaved(forStruct, undefined, { rounds: 10, perRound: quick ? 6 : 50, warmup: quick ? 150 : 1_500 });
    for (const [i, side] of forStruct.entries()) {
      side.out.erc20.structLogger = structSeq[i];
      side.out.loop1m.structLogger = await repeated(side.node.url, side.setup.hashes.loop1m, undefined, quick ? 1 : 3);
      side.out.heavy = await heavyTrace(side.node, side.setup.hashes.heavy);
    }
  } catch (e) {
    for (const side of [c, ac, as]) if (side.node) side.out.error ??= e.message;
  } finally {
    await Promise.all([c, ac, as].map((side) => side.node?.stop()));
  }
  return { c: c.out, a: mergeAnvil(ac.out, as.out) };
}

/** One result from the two anvils: the callTracer figures of the first, the struct logger's of the second. */
function mergeAnvil(call, struct) {
  const notRun = call.error === 'not run' && struct.error === 'not run';
  const errors = [call.error && `callTracer anvil (${ANVIL_CALL_TRACER_ARGS.join(' ')}): ${call.error}`, struct.error && `struct logger anvil (${ANVIL_STRUCT_LOGGER_ARGS.join(' ')}): ${struct.error}`].filter(Boolean);
  return {
    version: call.version ?? struct.version,
    setup: struct.setup ?? call.setup,
    erc20: { ...call.erc20, ...struct.erc20 },
    loop1m: { ...call.loop1m, ...struct.loop1m },
    heavy: struct.heavy,
    ...(notRun ? { error: 'not run' } : errors.length ? { error: errors.join('; ') } : {}),
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
  const { c, a } = await measure({ quick, withCornice, withAnvil, start });
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
    warmup: { traces: pick(c, 'erc20.callTracer.warmup.traces') ?? pick(a, 'erc20.callTracer.warmup.traces'), p50ms: side('erc20.callTracer.warmup.p50ms') },
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
    warmup: { traces: pick(c, 'erc20.structLogger.warmup.traces') ?? pick(a, 'erc20.structLogger.warmup.traces'), p50ms: side('erc20.structLogger.warmup.p50ms') },
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
