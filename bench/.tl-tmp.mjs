import { runVM } from '@cornice/core/testing';
import { workerFactory } from '../core/dist/src/vms/isolation/host.js';
import { Channel } from '../core/dist/src/vms/isolation/channel.js';
import { vmFactory as kvVM } from '../examples/custom-vm/dist/src/index.js';
let t0 = 0; let ev = [];
const mark = (s) => ev.push([s, performance.now() - t0]);
const origReq = Channel.prototype.request;
Channel.prototype.request = function (op, args) { const k = op + (op === 'block' ? ' ' + args[0] : ''); mark('> ' + k); const p = origReq.call(this, op, args); p.then(() => mark('< ' + k), () => {}); return p; };
const origRecv = Channel.prototype.receive;
Channel.prototype.receive = function (m) { if (m.t === 'req') mark('w> ' + m.op + (m.op === 'db' ? ' ' + m.args[1] : '')); return origRecv.call(this, m); };
const origReply = Channel.prototype.constructor.prototype;
const h = await runVM(workerFactory(kvVM, { moduleUrl: new URL('../examples/custom-vm/dist/src/index.js', import.meta.url).href, callTimeoutMs: 30000, shutdownTimeoutMs: 10000, maxBodyBytes: 1 << 20 }));
h.chain.accepted$.subscribe(() => mark('accepted$'));
for (let i = 0; i < 20; i++) { await h.call('kv.put', { key: `k${i}`, value: 'v' }); await h.waitForAccepted(i + 1, 5000); }
const runs = [];
for (let i = 20; i < 220; i++) { ev = []; t0 = performance.now(); const r = h.call('kv.put', { key: `k${i}`, value: 'v' }).then(() => mark('http reply')); await h.waitForAccepted(i + 1, 5000); await r; mark('done'); runs.push(ev); }
const byName = new Map();
for (const r of runs) { const seen = new Map(); for (const [s, t] of r) { const n = (seen.get(s) ?? 0) + 1; seen.set(s, n); const key = n > 1 ? s + ' #' + n : s; (byName.get(key) ?? byName.set(key, []).get(key)).push(t); } }
const med = (a) => { a = [...a].sort((x, y) => x - y); return a[Math.floor((a.length - 1) / 2)]; };
for (const [k, v] of [...byName].sort((a, b) => med(a[1]) - med(b[1]))) console.log(med(v).toFixed(3).padStart(7), String(v.length).padStart(4), k);
await h.stop();
