// --vm-isolation: the same VM on a one-node chain (the test kit's runVM, real engine and HTTP) in the
// node's process and in a worker thread, side by side. For the timestamp VM and the example kv VM:
// propose -> accepted latency (sequential proposals, p50/p90) and read-only service calls per second
// (64 in flight). Prints one JSON line per figure; the target is worker p50 within 2x of in-process.
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

async function measure(vm, mode, { proposals, callsMs }) {
  const factory = mode === 'worker' ? workerFactory(vm.factory, { moduleUrl: vm.moduleUrl, callTimeoutMs: 30_000, shutdownTimeoutMs: 10_000, maxBodyBytes: 1 << 20 }) : vm.factory;
  const h = await runVM(factory);
  try {
    const once = async (i) => {
      const t0 = performance.now();
      const reply = await vm.propose(h, i);
      if (reply.error) throw new Error(JSON.stringify(reply.error));
      await h.waitForAccepted(i + 1, 5_000);
      return performance.now() - t0;
    };
    let i = 0;
    for (; i < 20; i++) await once(i); // warm-up
    const latencies = [];
    for (let n = 0; n < proposals; n++, i++) latencies.push(await once(i));
    latencies.sort((a, b) => a - b);
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
    return { p50: pct(latencies, 0.5), p90: pct(latencies, 0.9), callsPerSec: Math.round((calls * 1000) / callsMs) };
  } finally {
    await h.stop();
  }
}

export async function benchIsolation({ proposals = 200, callsMs = 3_000 } = {}) {
  for (const vm of VMS) {
    const inProcess = await measure(vm, 'process', { proposals, callsMs });
    const worker = await measure(vm, 'worker', { proposals, callsMs });
    const ratio = Math.round((worker.p50 / inProcess.p50) * 100) / 100;
    report({ bench: `${vm.name} propose -> accepted p50, worker vs in-process`, value: worker.p50, unit: 'ms', target: `<= 2x in-process (${inProcess.p50} ms)`, inProcessP50: inProcess.p50, workerP50: worker.p50, ratio, inProcessP90: inProcess.p90, workerP90: worker.p90, samples: proposals });
    report({ bench: `${vm.name} service calls/s (64 in flight), worker vs in-process`, value: worker.callsPerSec, unit: 'calls/s', inProcess: inProcess.callsPerSec, worker: worker.callsPerSec, ratio: Math.round((worker.callsPerSec / inProcess.callsPerSec) * 100) / 100 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchIsolation({ proposals: process.env.BENCH_QUICK === '1' ? 50 : 200 });
