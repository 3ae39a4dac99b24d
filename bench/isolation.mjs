// --vm-isolation: the same VM on a one-node chain (the test kit's runVM, real engine and HTTP) in the
// node's process and in a worker thread, side by side. For the timestamp VM and the example kv VM:
// propose -> accepted latency (sequential proposals, p50/p90) and read-only service calls per second
// (64 in flight). Prints one JSON line per figure; the target is worker p50 within 2x of in-process.
// The two chains run side by side and proposals alternate between them (same load for both).
import { fileURLToPath } from 'node:url';
import { runVM } from '@cornice/core/testing';
import { cb58Encode, sha256 } from '@cornice/sdk';
import { workerFactory } from '../core/dist/src/vms/isolation/host.js';
import { vmFactory as timestampVM } from '@cornice/timestamp';
import { vmFactory as kvVM } from '../examples/custom-vm/dist/src/index.js';
import { report } from './lib.mjs';

const VMS = [
  {
    name: 'timestamp',
    factory: timestampVM,
    moduleUrl: import.meta.resolve('@cornice/timestamp'),
    propose: (h, i) => h.call('timestamp.proposeBlock', { data: cb58Encode(sha256(new TextEncoder().encode(`iso ${i} ${Math.random()}`))) }),
    read: (h) => h.call('timestamp.getBlock', {}),
  },
  {
    name: 'example kv',
    factory: kvVM,
    moduleUrl: new URL('../examples/custom-vm/dist/src/index.js', import.meta.url).href,
    propose: (h, i) => h.call('kv.put', { key: `k${i}`, value: 'v' }),
    read: (h) => h.call('kv.get', { key: 'k0' }),
  },
];

const pct = (xs, p) => Math.round(xs[Math.floor((xs.length - 1) * p)] * 100) / 100;

/** Sequential propose -> accepted latencies (ms) of one chain; `i` is the proposal's index (block height - 1). */
async function proposeOnce(vm, h, i) {
  const t0 = performance.now();
  const reply = await vm.propose(h, i);
  if (reply.error) throw new Error(JSON.stringify(reply.error));
  await h.waitForAccepted(i + 1, 5_000);
  return performance.now() - t0;
}

async function callsPerSec(vm, h, callsMs) {
  let calls = 0;
  const end = performance.now() + callsMs;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < end) {
        const r = await vm.read(h);
        if (r.error) throw new Error(JSON.stringify(r.error));
        calls++;
      }
    }),
  );
  return Math.round((calls * 1000) / callsMs);
}

/**
 * Both chains run side by side (each idle while the other is measured) and proposals alternate
 * between them, so that both modes see the same load on a shared machine.
 */
async function measure(vm, { proposals, callsMs }) {
  const worker = workerFactory(vm.factory, { moduleUrl: vm.moduleUrl, callTimeoutMs: 30_000, shutdownTimeoutMs: 10_000, maxBodyBytes: 1 << 20 });
  const modes = [
    { name: 'inProcess', h: await runVM(vm.factory), latencies: [] },
    { name: 'worker', h: await runVM(worker), latencies: [] },
  ];
  try {
    for (let i = 0; i < 20; i++) for (const m of modes) await proposeOnce(vm, m.h, i); // warm-up
    for (let n = 0; n < proposals; n++) {
      const i = 20 + n;
      // Alternate which mode goes first.
      for (const m of n % 2 === 0 ? modes : [...modes].reverse()) m.latencies.push(await proposeOnce(vm, m.h, i));
    }
    const out = {};
    for (const m of modes) {
      m.latencies.sort((a, b) => a - b);
      out[m.name] = { p50: pct(m.latencies, 0.5), p90: pct(m.latencies, 0.9) };
    }
    for (const m of modes) out[m.name].callsPerSec = await callsPerSec(vm, m.h, callsMs);
    return out;
  } finally {
    for (const m of modes) await m.h.stop();
  }
}

export async function benchIsolation({ proposals = 200, callsMs = 3_000 } = {}) {
  for (const vm of VMS) {
    const { inProcess, worker } = await measure(vm, { proposals, callsMs });
    const ratio = Math.round((worker.p50 / inProcess.p50) * 100) / 100;
    report({ bench: `${vm.name} propose -> accepted p50, worker vs in-process`, value: worker.p50, unit: 'ms', target: `<= 2x in-process (${inProcess.p50} ms)`, inProcessP50: inProcess.p50, workerP50: worker.p50, ratio, inProcessP90: inProcess.p90, workerP90: worker.p90, samples: proposals });
    report({ bench: `${vm.name} service calls/s (64 in flight), worker vs in-process`, value: worker.callsPerSec, unit: 'calls/s', inProcess: inProcess.callsPerSec, worker: worker.callsPerSec, ratio: Math.round((worker.callsPerSec / inProcess.callsPerSec) * 100) / 100 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchIsolation({ proposals: process.env.BENCH_QUICK === '1' ? 50 : 200 });
