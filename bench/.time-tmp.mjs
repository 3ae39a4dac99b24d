import { runVM } from '@cornice/core/testing';
import { cb58Encode, sha256 } from '@cornice/sdk';
import { workerFactory } from '../core/dist/src/vms/isolation/host.js';
import { Channel } from '../core/dist/src/vms/isolation/channel.js';
import { vmFactory as timestampVM } from '@cornice/timestamp';
import { vmFactory as kvVM } from '../examples/custom-vm/dist/src/index.js';
const times = new Map();
const add = (k, v) => { const a = times.get(k) ?? []; a.push(v); times.set(k, a); };
const origReq = Channel.prototype.request;
Channel.prototype.request = function (op, args) { const t0 = performance.now(); const p = origReq.call(this, op, args); const k = op + (op === 'block' ? ' ' + args[0] : ''); p.then(() => add(k, performance.now() - t0), () => {}); return p; };
const VMS = {
  timestamp: { factory: timestampVM, moduleUrl: import.meta.resolve('@cornice/timestamp'), propose: (h, i) => h.call('timestamp.proposeBlock', { data: cb58Encode(sha256(new TextEncoder().encode(`iso ${i} ${Math.random()}`))) }) },
  kv: { factory: kvVM, moduleUrl: new URL('../examples/custom-vm/dist/src/index.js', import.meta.url).href, propose: (h, i) => h.call('kv.put', { key: `k${i}`, value: 'v' }) },
};
const vm = VMS[process.argv[2]];
const mode = process.argv[3] ?? 'worker';
const f = mode === 'worker' ? workerFactory(vm.factory, { moduleUrl: vm.moduleUrl, callTimeoutMs: 30000, shutdownTimeoutMs: 10000, maxBodyBytes: 1 << 20 }) : vm.factory;
const h = await runVM(f);
for (let i = 0; i < 20; i++) { await vm.propose(h, i); await h.waitForAccepted(i + 1, 5000); }
times.clear();
const N = 200; const lat = [];
const c0 = process.cpuUsage();
for (let i = 20; i < 20 + N; i++) { const t0 = performance.now(); await vm.propose(h, i); await h.waitForAccepted(i + 1, 5000); lat.push(performance.now() - t0); }
const cpu = process.cpuUsage(c0);
const med = (a) => { a = [...a].sort((x, y) => x - y); return a[Math.floor((a.length - 1) / 2)]; };
console.log(mode, process.argv[2], 'p50', med(lat).toFixed(3), 'cpu/op(ms, process incl worker)', ((cpu.user + cpu.system) / 1000 / N).toFixed(3));
for (const [k, v] of [...times].sort()) if (k !== 'waitForEvent') console.log('  ', k.padEnd(20), 'median ms', med(v).toFixed(3));
await h.stop();
