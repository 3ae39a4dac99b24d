import { runVM } from '@cornice/core/testing';
import { workerFactory } from '../core/dist/src/vms/isolation/host.js';
import { Channel } from '../core/dist/src/vms/isolation/channel.js';
import { vmFactory as kvVM } from '../examples/custom-vm/dist/src/index.js';
const abBytes = (v, seen = new Set()) => { if (v instanceof Uint8Array) return seen.has(v.buffer) ? 0 : (seen.add(v.buffer), v.buffer.byteLength); if (Array.isArray(v)) return v.reduce((a, x) => a + abBytes(x, seen), 0); if (v && typeof v === 'object') return Object.values(v).reduce((a, x) => a + abBytes(x, seen), 0); return 0; };
const origReq = Channel.prototype.request;
Channel.prototype.request = function (op, args) { const n = abBytes(args); if (n > 0) console.log('host req', op, args[0], 'arraybuffer bytes', n); return origReq.call(this, op, args); };
const origRecv = Channel.prototype.receive;
Channel.prototype.receive = function (m) { const n = abBytes(m.t === 'res' ? m.value : m.args); if (n > 0) console.log('from worker', m.t, m.op ?? '', 'arraybuffer bytes', n); return origRecv.call(this, m); };
const h = await runVM(workerFactory(kvVM, { moduleUrl: new URL('../examples/custom-vm/dist/src/index.js', import.meta.url).href, callTimeoutMs: 30000, shutdownTimeoutMs: 10000, maxBodyBytes: 1 << 20 }));
for (let i = 0; i < 3; i++) { await h.call('kv.put', { key: `k${i}`, value: 'v' }); await h.waitForAccepted(i + 1, 5000); }
console.log('---- one more'); await h.call('kv.put', { key: `kx`, value: 'v' }); await h.waitForAccepted(4, 5000);
await h.stop();
