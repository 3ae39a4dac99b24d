import { runVM } from '@cornice/core/testing';
import { cb58Encode, sha256 } from '@cornice/sdk';
import { workerFactory } from '../core/dist/src/vms/isolation/host.js';
import { Channel } from '../core/dist/src/vms/isolation/channel.js';
import { vmFactory as timestampVM } from '@cornice/timestamp';
import { vmFactory as kvVM } from '../examples/custom-vm/dist/src/index.js';
const counts = new Map();
const bump = (k) => counts.set(k, (counts.get(k) ?? 0) + 1);
const origReq = Channel.prototype.request;
Channel.prototype.request = function (op, args) { bump('host->worker req ' + op + (op === 'block' ? ' ' + args[0] : '')); return origReq.call(this, op, args); };
const origEvt = Channel.prototype.event;
Channel.prototype.event = function (op, args) { bump('host->worker evt ' + op); return origEvt.call(this, op, args); };
const origRecv = Channel.prototype.receive;
Channel.prototype.receive = function (m) { if (m.t === 'req') bump('worker->host req ' + m.op + (m.op === 'db' ? ' ' + m.args[1] : '')); else if (m.t === 'evt') bump('worker->host evt ' + m.op); return origRecv.call(this, m); };
const VMS = {
  timestamp: { factory: timestampVM, moduleUrl: import.meta.resolve('@cornice/timestamp'), propose: (h, i) => h.call('timestamp.proposeBlock', { data: cb58Encode(sha256(new TextEncoder().encode(`iso ${i} ${Math.random()}`))) }) },
  kv: { factory: kvVM, moduleUrl: new URL('../examples/custom-vm/dist/src/index.js', import.meta.url).href, propose: (h, i) => h.call('kv.put', { key: `k${i}`, value: 'v' }) },
};
const vm = VMS[process.argv[2]];
const h = await runVM(workerFactory(vm.factory, { moduleUrl: vm.moduleUrl, callTimeoutMs: 30000, shutdownTimeoutMs: 10000, maxBodyBytes: 1 << 20 }));
for (let i = 0; i < 10; i++) { await vm.propose(h, i); await h.waitForAccepted(i + 1, 5000); }
counts.clear();
const N = 50;
for (let i = 10; i < 10 + N; i++) { await vm.propose(h, i); await h.waitForAccepted(i + 1, 5000); }
await new Promise((r) => setTimeout(r, 50));
for (const [k, v] of [...counts].sort()) console.log((v / N).toFixed(2).padStart(6), k);
await h.stop();
