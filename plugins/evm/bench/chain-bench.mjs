#!/usr/bin/env node
// Backend-level speed of the EVM chain (no HTTP): signed transfers admitted and accepted per second
// through the VM (sendRawTransaction, then build + verify + accept), a sequential send->accepted
// latency, eth_call/s and eth_getBalance/s on the backend. Run after `npx tsc -b`:
//   node plugins/evm/bench/chain-bench.mjs [--txs 4000] [--senders 10] [--calls 20000] [--db memory|level] [--profile]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from '@cornice/sdk';
import { LevelStore } from '@cornice/core';
import { EWOQ, INIT, addr, buildAndAccept, key, signedTx, startVM, GWEI } from '../dist/test/helpers.js';
import { addressOfKey } from '../dist/src/chain/crypto.js';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const TXS = Number(opt('txs', 4000));
const SENDERS = Number(opt('senders', 10));
const CALLS = Number(opt('calls', 20000));
const DB = opt('db', 'level');

const dir = DB === 'level' ? await mkdtemp(join(tmpdir(), 'evm-bench-')) : undefined;
const db = dir ? await LevelStore.open(dir) : new MemoryStore();
const vm = await startVM({ db });
const be = vm.backend;

async function drain() {
  let blocks = 0;
  while (vm.chain.mempool.size > 0) {
    await buildAndAccept(vm);
    blocks++;
  }
  return blocks;
}

// Fund the senders.
const keys = Array.from({ length: SENDERS }, (_, i) => key(100 + i));
for (const [i, k] of keys.entries()) await be.sendRawTransaction(signedTx({ nonce: BigInt(i), to: addressOfKey(k), value: 10n ** 22n }).serialize());
await drain();

function presign(round) {
  const txs = [];
  const per = Math.ceil(TXS / SENDERS);
  for (let n = 0; n < per; n++) for (const k of keys) if (txs.length < TXS) txs.push(signedTx({ key: k, nonce: BigInt(round * per + n), to: addr((n % 200) + 1), value: 1n, maxFee: 50n * GWEI }).serialize());
  return txs;
}

async function transfers(round, label) {
  const raws = presign(round);
  const t0 = performance.now();
  // Pipelined: admit in waves of 64 (what a client with 64 requests in flight does), building as txs come.
  let blocks = 0;
  for (let i = 0; i < raws.length; i += 64) {
    await Promise.all(raws.slice(i, i + 64).map((r) => be.sendRawTransaction(r)));
    await buildAndAccept(vm);
    blocks++;
  }
  blocks += await drain();
  const ms = performance.now() - t0;
  console.log(`${label}: ${raws.length} transfers admitted+built+verified+accepted in ${ms.toFixed(0)} ms = ${((raws.length / ms) * 1000).toFixed(0)} tx/s (${blocks} blocks)`);
}

await transfers(0, 'transfers (cold)');
await transfers(1, 'transfers (warm)');

// Sequential send -> accepted -> receipt latency.
{
  const k = keys[0];
  let nonce = await be.nonce(addressOfKey(k), 'pending');
  const lat = [];
  for (let i = 0; i < 300; i++) {
    const raw = signedTx({ key: k, nonce: nonce++, to: addr(1), value: 1n }).serialize();
    const t0 = performance.now();
    const h = await be.sendRawTransaction(raw);
    await buildAndAccept(vm);
    const r = await be.receipt(h);
    lat.push(performance.now() - t0);
    if (!r) throw new Error('no receipt');
  }
  lat.sort((a, b) => a - b);
  console.log(`sequential send->accept->receipt: p50 ${lat[150].toFixed(2)} ms, p90 ${lat[270].toFixed(2)} ms`);
}

// eth_call on a deployed contract, and eth_getBalance.
{
  const nonce = await be.nonce(EWOQ, 'pending');
  const h = await be.sendRawTransaction(signedTx({ nonce, data: INIT, gas: 200_000n }).serialize());
  await drain();
  const ca = (await be.receipt(h)).contractAddress;
  const data = new Uint8Array();
  for (const [name, fn] of [
    ['eth_call', () => be.call({ to: ca, data }, 'latest')],
    ['eth_getBalance', () => be.balance(EWOQ, 'latest')],
  ]) {
    for (let i = 0; i < 2000; i++) await fn();
    let t0 = performance.now();
    for (let i = 0; i < CALLS; i++) await fn();
    let ms = performance.now() - t0;
    console.log(`${name} sequential: ${((CALLS / ms) * 1000).toFixed(0)}/s`);
    t0 = performance.now();
    for (let i = 0; i < CALLS; i += 32) await Promise.all(Array.from({ length: 32 }, fn));
    ms = performance.now() - t0;
    console.log(`${name} 32 in flight: ${((CALLS / ms) * 1000).toFixed(0)}/s`);
  }
}

await vm.shutdown();
await db.close();
if (dir) await rm(dir, { recursive: true, force: true });
