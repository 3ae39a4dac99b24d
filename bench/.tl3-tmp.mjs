import { runVM } from '@cornice/core/testing';
import { workerFactory } from '../core/dist/src/vms/isolation/host.js';
import { vmFactory as kvVM } from '@cornice/timestamp'; import { cb58Encode, sha256 } from '@cornice/sdk';
let t0 = 0; let ev = [];
const mark = (s) => ev.push([s, performance.now() - t0]);
const wrapP = (name, fn) => (...a) => { mark('> ' + name); const p = fn(...a); Promise.resolve(p).then(() => mark('< ' + name), () => {}); return p; };
const wrapBlock = (b) => b && ({ id: b.id, parentId: b.parentId, height: b.height, timestamp: b.timestamp, bytes: b.bytes, verify: wrapP('verify', () => b.verify()), accept: wrapP('accept', () => b.accept()), reject: () => b.reject() });
const wrapVM = (vm) => new Proxy(vm, { get(t, k) { const v = t[k]; if (typeof v !== 'function') return v; const f = v.bind(t); if (k === 'buildBlock' || k === 'getBlock' || k === 'parseBlock') return (...a) => { mark('> ' + k); return f(...a).then((b) => (mark('< ' + k), wrapBlock(b))); }; if (k === 'setPreference' || k === 'waitForEvent' || k === 'lastAccepted') return wrapP(k, f); if (k === 'createHandlers') return async () => (await f()).map((h) => ({ ...h, services: h.services?.map((s) => ({ def: s.def, methods: new Map([...s.methods].map(([n, m]) => [n, wrapP('svc ' + n, m)])) })) })); return f; } });
const mode = process.argv[2];
const moduleUrl = import.meta.resolve('@cornice/timestamp');
const base = mode === 'worker' ? workerFactory(kvVM, { moduleUrl, callTimeoutMs: 30000, shutdownTimeoutMs: 10000, maxBodyBytes: 1 << 20 }) : kvVM;
const f = { ...base, create: () => wrapVM(base.create()) };
const h = await runVM(f);
h.chain.accepted$.subscribe(() => mark('accepted$'));
for (let i = 0; i < 20; i++) { await h.call('timestamp.proposeBlock', { data: cb58Encode(sha256(new TextEncoder().encode('x' + i + Math.random()))) }); await h.waitForAccepted(i + 1, 5000); }
const runs = [];
for (let i = 20; i < 220; i++) { ev = []; t0 = performance.now(); const r = h.call('timestamp.proposeBlock', { data: cb58Encode(sha256(new TextEncoder().encode('x' + i + Math.random()))) }).then(() => mark('http reply')); await h.waitForAccepted(i + 1, 5000); await r; mark('done'); runs.push(ev); }
const byName = new Map();
for (const r of runs) { const seen = new Map(); for (const [s, t] of r) { const n = (seen.get(s) ?? 0) + 1; seen.set(s, n); const key = n > 1 ? s + ' #' + n : s; (byName.get(key) ?? byName.set(key, []).get(key)).push(t); } }
const med = (a) => { a = [...a].sort((x, y) => x - y); return a[Math.floor((a.length - 1) / 2)]; };
console.log(mode);
for (const [k, v] of [...byName].sort((a, b) => med(a[1]) - med(b[1]))) console.log(med(v).toFixed(3).padStart(7), String(v.length).padStart(4), k);
await h.stop();
