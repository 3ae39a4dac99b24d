#!/usr/bin/env node
// Heavy eth_calls against a node started with the `npm start` flags: for each, how long the call
// took and how long /ext/health waited when asked 100 ms into it (a node that runs the call on its
// event loop answers health only after it). Not part of `npm run bench`: a probe of the C-Chain's
// guards (plugins/evm: chain/call-guard.ts, chain/precompiles/offload.ts). One JSON line per call.
//   node bench/evm-heavy-calls.mjs [name ...]   (NODE_ARGS="--vm-isolation=all": more node flags)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { rpc, startNode } from './lib.mjs';

const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));
const word = (n) => BigInt(n).toString(16).padStart(64, '0');
const G2 =
  '198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c21800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed' +
  '090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa';
const at = (n) => `0x${n.toString(16).padStart(40, '0')}`;
const modexp = (b, e, m) => `0x${word(b)}${word(e)}${word(m)}${'ff'.repeat(b)}${'ff'.repeat(e)}${'fd'.repeat(m)}`;
const loopAt = at(0xc0);
// KZG: the zero polynomial (commitment and proof the point at infinity, y = 0 at any z) holds.
const INF = `c0${'00'.repeat(47)}`;
const kzgInput = `0x01${createHash('sha256').update(Buffer.from(INF, 'hex')).digest('hex').slice(2)}${'00'.repeat(31)}09${'00'.repeat(32)}${INF}${INF}`;

/** name -> eth_call params */
const CALLS = {
  'loop to the gas cap': [{ to: loopAt }, 'latest', { [loopAt]: { code: '0x5b600056' } }],
  'BN254 pairing, 1,400 pairs': [{ to: at(8), data: `0x${(word(1) + word(2) + G2).repeat(1400)}` }, 'latest'],
  'MODEXP, 100 KB exponent': [{ to: at(5), data: modexp(32, 100_000, 32) }, 'latest'],
  'MODEXP, 200 KB exponent': [{ to: at(5), data: modexp(64, 200_000, 64) }, 'latest'],
  'MODEXP, 18 MB exponent declared in a short input': [{ to: at(5), data: `0x${word(1)}${word(18_000_000)}${word(1)}02ffff` }, 'latest'],
  'BLAKE2F, 10M rounds': [{ to: at(9), data: `0x${(10_000_000).toString(16).padStart(8, '0')}${'00'.repeat(208)}01` }, 'latest'],
  'KZG point evaluation, bad input': [{ to: at(10), data: `0x${'11'.repeat(192)}` }, 'latest'],
  'KZG point evaluation, a proof that holds': [{ to: at(10), data: kzgInput }, 'latest'],
};

const only = process.argv.slice(2);
const dir = await mkdtemp(join(tmpdir(), 'cornice-heavy-'));
const node = await startNode([`--data-dir=${dir}`, '--network-id=local', `--staking-tls-cert-file=${fixture('staker1.crt')}`, `--staking-tls-key-file=${fixture('staker1.key')}`, '--sybil-protection-enabled=false', ...(process.env.NODE_ARGS ? process.env.NODE_ARGS.split(' ') : [])]);
const url = `${node.url}/ext/bc/C/rpc`;
try {
  for (let i = 0; i < 200 && !(await rpc(url, 'eth_chainId', []).catch(() => ({}))).result; i++) await new Promise((r) => setTimeout(r, 100));
  for (const [name, params] of Object.entries(CALLS)) {
    if (only.length && !only.some((o) => name.includes(o))) continue;
    const t0 = performance.now();
    const call = rpc(url, 'eth_call', params).then((r) => ({ ms: Math.round(performance.now() - t0), r }));
    await new Promise((r) => setTimeout(r, 100));
    const t1 = performance.now();
    const status = await fetch(`${node.url}/ext/health`).then((r) => r.status);
    const healthMs = Math.round(performance.now() - t1);
    const { ms, r } = await call;
    const answer = r.error ? `error ${r.error.code}: ${r.error.message}` : `${String(r.result).slice(0, 18)}… (${(String(r.result).length - 2) / 2} bytes)`;
    console.log(JSON.stringify({ call: name, callMs: ms, healthMs, healthStatus: status, answer }));
  }
} finally {
  await node.stop();
  await rm(dir, { recursive: true, force: true });
}
