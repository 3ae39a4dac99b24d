/**
 * The pool's two parts (chain/mempool.ts): executable and future txs apart, per-account and global
 * bounds for future txs, their lifetime on the chain's clock, price-based eviction, promotion when a
 * gap fills, slots by size, and the same bounds for txs that come by gossip. Issue 32, point 5: 64 funded
 * keys each sending nonces 1–256 filled the pool for good ("txpool is full" for everyone, at any price).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { utf8Encode } from '@cornice/sdk';
import type { TypedTransaction } from '@ethereumjs/tx';
import { EvmRpcError, type EvmVM } from '../src/index.js';
import { encodeTxGossip } from '../src/gossip.js';
import { Mempool, comparePrice } from '../src/chain/mempool.js';
import { GWEI, addr, buildAndAccept, genesisJson, hex, key, signedTx, startVM } from './helpers.js';
import type { EvmVMOptions } from '../src/index.js';

/** A genesis funding key(1)..key(n) with 1,000 AVAX each (beside ewoq). */
function fundedGenesis(n: number): Uint8Array {
  const alloc: Record<string, unknown> = {};
  for (let i = 1; i <= n; i++) alloc[hex(addr(i)).slice(2)] = { balance: '0x3635c9adc5dea00000' };
  return utf8Encode(JSON.stringify(genesisJson(alloc)));
}

/** A VM on a manual clock (ms), its keys funded. */
async function start(o: { keys?: number; opts?: EvmVMOptions } = {}): Promise<{ vm: EvmVM; clock: { now: number } }> {
  const clock = { now: 1_700_000_000_000 };
  const vm = await startVM({ genesis: fundedGenesis(o.keys ?? 8), ...(o.opts ? { opts: o.opts } : {}), now: () => clock.now });
  return { vm, clock };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  assert.instance(e, EvmRpcError, `refused, got ${String(e)}`);
  assert.is((e as EvmRpcError).rpcCode, -32000);
  return (e as Error).message;
}

const send = (vm: EvmVM, tx: TypedTransaction) => vm.backend.sendRawTransaction(tx.serialize());
const tx = (k: number, nonce: number, o: { maxFee?: bigint; tip?: bigint; data?: Uint8Array; gas?: bigint } = {}) =>
  signedTx({ key: key(k), nonce: BigInt(nonce), to: addr(200), value: 1n, ...o });

test('the 64×256 gapped flood: future txs are bounded per account (64) and in all (1,024); a normal transfer still gets in and is mined; the flood expires after tx-pool-lifetime (10 min)', async () => {
  const { vm, clock } = await start({ keys: 64 });
  try {
    const refusals = new Map<string, number>();
    let admitted = 0;
    const t0 = performance.now();
    for (let k = 1; k <= 64; k++) {
      for (let n = 1; n <= 256; n++) {
        try {
          await send(vm, tx(k, n));
          admitted++;
        } catch (e) {
          const m = (e as Error).message.replace(/0x[0-9a-f]{40} has \d+/, '0x… has N');
          refusals.set(m, (refusals.get(m) ?? 0) + 1);
        }
      }
    }
    const floodMs = performance.now() - t0;
    assert.is(admitted, 1024, 'the global bound of future txs');
    assert.equal([...refusals.keys()].sort(), [
      'account limit exceeded: address 0x… has N future (gapped) txs pooled, the most an account may (tx-pool-account-queue)',
      'txpool is full',
    ]);
    assert.equal(vm.chain.mempool.stats(), { executable: 0, future: 1024, executableSlots: 0, futureSlots: 1024 });

    // A normal transfer, at an ordinary price: admitted at once and mined.
    const t1 = performance.now();
    const hash = await send(vm, signedTx({ nonce: 0n, to: addr(201), value: 5n, maxFee: 50n * GWEI }));
    const b = await buildAndAccept(vm);
    const transferMs = performance.now() - t1;
    assert.equal(b.eth.transactions.map((t) => hex(t.hash())), [hex(hash)]);
    assert.is(await vm.backend.balance(addr(201), 'latest'), 5n);
    console.log(`    flood of 16,384 gapped txs admitted/refused in ${floodMs.toFixed(0)} ms; then a transfer admitted and mined in ${transferMs.toFixed(1)} ms`);

    // A future tx of a new sender paying more evicts one of the cheapest; the same price does not.
    const k65 = key(65);
    await send(vm, signedTx({ nonce: 1n, to: addr(65), value: 10n ** 18n }));
    await buildAndAccept(vm);
    assert.is(await refusal(vm.backend.sendRawTransaction(signedTx({ key: k65, nonce: 1n, to: addr(1), maxFee: 50n * GWEI }).serialize())), 'txpool is full');
    await vm.backend.sendRawTransaction(signedTx({ key: k65, nonce: 1n, to: addr(1), maxFee: 51n * GWEI }).serialize());
    assert.is(vm.chain.mempool.stats().future, 1024);

    // Ten minutes on the chain's clock (coreth's tx-pool-lifetime): the flood is gone.
    clock.now += 10 * 60_000 - 1;
    assert.is(vm.chain.mempool.stats().future, 1024, 'not before its lifetime');
    clock.now += 1;
    assert.equal(vm.chain.mempool.stats(), { executable: 0, future: 0, executableSlots: 0, futureSlots: 0 });
    assert.is(vm.chain.mempool.size, 0);
  } finally {
    await vm.shutdown();
  }
});

test('future txs: per-account and global limits; a new one evicts the cheapest future tx of another account only when it pays more; never an executable one', async () => {
  const { vm } = await start({ opts: { mempool: { accountQueue: 2, globalQueue: 4, globalSlots: 2 } } });
  try {
    await send(vm, tx(1, 2, { maxFee: 40n * GWEI }));
    await send(vm, tx(1, 3, { maxFee: 41n * GWEI }));
    assert.match(await refusal(send(vm, tx(1, 4, { maxFee: 99n * GWEI }))), /^account limit exceeded: address 0x[0-9a-f]{40} has 2 future/);
    const cheapest = await send(vm, tx(2, 5, { maxFee: 30n * GWEI }));
    await send(vm, tx(2, 6, { maxFee: 45n * GWEI }));
    assert.is(vm.chain.mempool.stats().future, 4);
    // The same price as the cheapest, or less: refused, nothing evicted.
    assert.is(await refusal(send(vm, tx(3, 1, { maxFee: 30n * GWEI }))), 'txpool is full');
    // More: the cheapest future tx (key 2's nonce 5) goes.
    const dearer = await send(vm, tx(3, 1, { maxFee: 31n * GWEI }));
    assert.is(vm.chain.mempool.get(hex(cheapest).slice(2)), undefined, 'the cheapest was evicted');
    assert.ok(vm.chain.mempool.get(hex(dearer).slice(2)));
    assert.is(vm.chain.mempool.stats().future, 4);
    // The effective tip counts first: a fee cap of 90 gwei with no tip pays less than 31 gwei with a 1 gwei tip.
    assert.ok(comparePrice({ feeCap: 90n * GWEI, tip: 0n }, { feeCap: 31n * GWEI, tip: GWEI }, 25n * GWEI) < 0);
    // Executable txs have their own part: the full future part does not stop them, and a future tx never evicts one.
    await send(vm, tx(4, 0, { maxFee: 26n * GWEI }));
    await send(vm, tx(5, 0, { maxFee: 26n * GWEI }));
    assert.equal(vm.chain.mempool.stats(), { executable: 2, future: 4, executableSlots: 2, futureSlots: 4 });
    // Future part: 31, 40, 41, 45 gwei. A future tx of 28 gwei pays more than the executable ones (26) but evicts none of them.
    assert.is(await refusal(send(vm, tx(6, 1, { maxFee: 28n * GWEI }))), 'txpool is full');
    assert.equal(vm.chain.mempool.stats(), { executable: 2, future: 4, executableSlots: 2, futureSlots: 4 });
  } finally {
    await vm.shutdown();
  }
});

test('executable txs: a full part takes a newcomer that pays more than the cheapest executable tx (whose account\'s later txs become future); a cheaper one is refused', async () => {
  const { vm } = await start({ opts: { mempool: { globalSlots: 4 } } });
  try {
    await send(vm, tx(1, 0, { maxFee: 40n * GWEI }));
    await send(vm, tx(1, 1, { maxFee: 41n * GWEI }));
    const b0 = await send(vm, tx(2, 0, { maxFee: 30n * GWEI }));
    const b1 = await send(vm, tx(2, 1, { maxFee: 42n * GWEI }));
    assert.is(vm.chain.mempool.stats().executable, 4);
    assert.is(await refusal(send(vm, tx(3, 0, { maxFee: 30n * GWEI }))), 'txpool is full');
    assert.is(vm.chain.mempool.stats().executable, 4, 'a refusal evicts nothing');
    // Its own txs are never its victims.
    assert.is(await refusal(send(vm, tx(1, 2, { maxFee: 29n * GWEI }))), 'txpool is full');
    const c0 = await send(vm, tx(3, 0, { maxFee: 31n * GWEI }));
    assert.is(vm.chain.mempool.get(hex(b0).slice(2)), undefined, 'the cheapest executable tx went');
    assert.ok(vm.chain.mempool.get(hex(b1).slice(2))!.queuedAt !== undefined, 'its account\'s later tx is future now');
    assert.equal(vm.chain.mempool.stats(), { executable: 3, future: 1, executableSlots: 3, futureSlots: 1 });
    assert.is(await vm.backend.nonce(addr(2), 'pending'), 0n);
    const b = await buildAndAccept(vm);
    assert.is(b.eth.transactions.length, 3);
    assert.ok(b.eth.transactions.some((t) => hex(t.hash()) === hex(c0)));
    // Key 2 sends nonce 0 again: its nonce 1 is promoted and both are mined.
    await send(vm, tx(2, 0, { maxFee: 30n * GWEI }));
    assert.equal(vm.chain.mempool.stats(), { executable: 2, future: 0, executableSlots: 2, futureSlots: 0 });
    assert.is((await buildAndAccept(vm)).eth.transactions.length, 2);
    assert.is(vm.chain.mempool.size, 0);
  } finally {
    await vm.shutdown();
  }
});

test('executable txs: accounts beyond tx-pool-account-slots give up their highest txs first when the part is full (geth\'s fair share)', async () => {
  const { vm } = await start({ opts: { mempool: { globalSlots: 4, accountSlots: 2 } } });
  try {
    const a = [];
    for (let n = 0; n < 4; n++) a.push(await send(vm, tx(1, n, { maxFee: 90n * GWEI })));
    // Cheaper, but key 1 holds 4 > 2: its nonce 3, then 2, make room.
    await send(vm, tx(2, 0, { maxFee: 26n * GWEI }));
    assert.is(vm.chain.mempool.get(hex(a[3]!).slice(2)), undefined);
    await send(vm, tx(2, 1, { maxFee: 26n * GWEI }));
    assert.is(vm.chain.mempool.get(hex(a[2]!).slice(2)), undefined);
    // Now both hold their share; a cheaper newcomer is refused.
    assert.is(await refusal(send(vm, tx(3, 0, { maxFee: 26n * GWEI }))), 'txpool is full');
    assert.is(await vm.backend.nonce(addr(1), 'pending'), 2n);
  } finally {
    await vm.shutdown();
  }
});

test('a filled gap promotes the future txs; they are gossiped (and announced) only once executable; gossiped txs meet the same bounds', async () => {
  const { vm } = await start({ opts: { mempool: { accountQueue: 3 } } });
  try {
    const gossiped: string[] = [];
    vm.chain.admission.onAdmitted = (raw) => gossiped.push(hex(raw));
    const later = [3, 1, 2].map((n) => tx(1, n));
    for (const t of later) await send(vm, t);
    assert.equal(gossiped, [], 'future txs are not gossiped');
    assert.is(await vm.backend.nonce(addr(1), 'pending'), 0n);
    assert.is(vm.chain.mempool.hasExecutable(new Map()), false);
    const first = tx(1, 0);
    await send(vm, first);
    assert.equal(gossiped, [hex(first.serialize()), ...[1, 2, 3].map((n) => hex(tx(1, n).serialize()))], 'the filler, then what it promoted, in nonce order');
    assert.is(await vm.backend.nonce(addr(1), 'pending'), 4n);
    assert.equal(vm.chain.mempool.stats().future, 0);
    assert.is((await buildAndAccept(vm)).eth.transactions.length, 4);

    // By gossip: the same admission, so the same per-account bound.
    const from = { bytes: new Uint8Array(20) } as never;
    await vm.onGossip(from, encodeTxGossip([5, 6, 7, 8, 9].map((n) => tx(2, n).serialize()))[0]!);
    assert.equal(vm.chain.mempool.stats(), { executable: 0, future: 3, executableSlots: 0, futureSlots: 3 });
    gossiped.length = 0;
    // A gossiped filler is not gossiped again, but what it promotes here is.
    await vm.onGossip(from, encodeTxGossip([0, 1, 2, 3, 4].map((n) => tx(2, n).serialize()))[0]!);
    assert.equal(gossiped, [5, 6, 7].map((n) => hex(tx(2, n).serialize())));
    assert.is(vm.chain.mempool.stats().executable, 8);
  } finally {
    await vm.shutdown();
  }
});

test('a gossip payload gives the event loop turns while its txs are admitted (1,024 of them held it ~230 ms)', async () => {
  const { vm } = await start({ keys: 16 });
  try {
    const raws: Uint8Array[] = [];
    for (let k = 1; k <= 16; k++) for (let n = 1; n <= 64; n++) raws.push(tx(k, n).serialize());
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const t = performance.now();
    await vm.onGossip({ bytes: new Uint8Array(20) } as never, encodeTxGossip(raws)[0]!);
    const ms = performance.now() - t;
    running = false;
    assert.is(vm.chain.mempool.stats().future, 1024);
    assert.ok(turns >= Math.floor(ms / 40), `${turns} turns in ${ms.toFixed(0)} ms`);
    assert.ok(turns >= 2, `${turns} turns in ${ms.toFixed(0)} ms`);
  } finally {
    await vm.shutdown();
  }
});

test('future txs expire after tx-pool-lifetime on the chain clock (from when they became future); the receipt wait of one ends when it goes', async () => {
  const { vm, clock } = await start({ opts: { mempool: { lifetimeMs: 60_000 } } });
  try {
    const h1 = await send(vm, tx(1, 1));
    clock.now += 30_000;
    const h2 = await send(vm, tx(1, 2));
    const receipt = vm.backend.receipt(h1);
    clock.now += 30_000;
    assert.is(vm.chain.mempool.get(hex(h1).slice(2)), undefined, 'the first, 60 s old');
    assert.ok(vm.chain.mempool.get(hex(h2).slice(2)), 'the second, 30 s old');
    assert.is(await receipt, undefined);
    // Promoted before its time: it no longer expires.
    await send(vm, tx(1, 0));
    await send(vm, tx(1, 1));
    clock.now += 120_000;
    assert.is(vm.chain.mempool.size, 3);
    assert.is((await buildAndAccept(vm)).eth.transactions.length, 3);
  } finally {
    await vm.shutdown();
  }
});

test('slots: a tx takes one per 32 KiB of its encoding, so the bounds hold the memory; a replacement needing more slots must find room', async () => {
  const { vm } = await start({ opts: { mempool: { globalQueue: 4 } } });
  try {
    const big = new Uint8Array(100_000).fill(1);
    await send(vm, tx(1, 1, { data: big, gas: 2_000_000n }));
    assert.equal(vm.chain.mempool.stats(), { executable: 0, future: 1, executableSlots: 0, futureSlots: 4 });
    assert.is(await refusal(send(vm, tx(2, 1))), 'txpool is full');
    // A dearer small future tx evicts the big one (cheaper): its 4 slots free.
    await send(vm, tx(2, 1, { maxFee: 60n * GWEI }));
    assert.equal(vm.chain.mempool.stats(), { executable: 0, future: 1, executableSlots: 0, futureSlots: 1 });
    // Replacing it with a big one (priced up) needs 3 more slots: there are.
    await send(vm, tx(2, 1, { maxFee: 70n * GWEI, tip: GWEI, data: big, gas: 2_000_000n }));
    assert.equal(vm.chain.mempool.stats(), { executable: 0, future: 1, executableSlots: 0, futureSlots: 4 });
  } finally {
    await vm.shutdown();
  }
});

test('a tx that fails at build leaves; its account\'s later txs become future (not lost) and come back when the nonce is sent again', async () => {
  const { vm } = await start();
  try {
    const { addressOfKey } = await import('../src/chain/crypto.js');
    const k = key(99);
    const who = addressOfKey(k);
    const fee = 21_000n * 25n * GWEI;
    await send(vm, signedTx({ nonce: 0n, to: who, value: 3n * fee }));
    await buildAndAccept(vm);
    // nonce 0 spends everything but its fee; nonce 1 (admitted on the accepted state) cannot pay at build.
    await vm.backend.sendRawTransaction(signedTx({ key: k, nonce: 0n, to: addr(1), value: 2n * fee - 1000n, maxFee: 25n * GWEI }).serialize());
    const h1 = await vm.backend.sendRawTransaction(signedTx({ key: k, nonce: 1n, to: addr(1), value: 1n, maxFee: 25n * GWEI }).serialize());
    const h2 = await vm.backend.sendRawTransaction(signedTx({ key: k, nonce: 2n, to: addr(1), value: 1n, maxFee: 25n * GWEI }).serialize());
    const b = await buildAndAccept(vm);
    assert.is(b.eth.transactions.length, 1);
    assert.is(vm.chain.mempool.get(hex(h1).slice(2)), undefined, 'the failing tx was dropped');
    assert.ok(vm.chain.mempool.get(hex(h2).slice(2))?.queuedAt !== undefined, 'the next is future');
    await send(vm, signedTx({ nonce: 1n, to: who, value: 10n * fee }));
    await buildAndAccept(vm);
    await vm.backend.sendRawTransaction(signedTx({ key: k, nonce: 1n, to: addr(1), value: 1n, maxFee: 25n * GWEI }).serialize());
    assert.is((await buildAndAccept(vm)).eth.transactions.length, 2);
    assert.is(vm.chain.mempool.size, 0);
  } finally {
    await vm.shutdown();
  }
});

test('pool bounds are options checked at start, and coreth\'s tx-pool-* keys of the chain config set them', async () => {
  const { parseChainConfig } = await import('../src/chain-config.js');
  const { options } = parseChainConfig(
    utf8Encode(JSON.stringify({ 'tx-pool-account-slots': 8, 'tx-pool-global-slots': 100, 'tx-pool-account-queue': 4, 'tx-pool-global-queue': 50, 'tx-pool-lifetime': '3h', 'tx-pool-price-bump': 12 })),
  );
  assert.equal(options, { mempool: { accountSlots: 8, globalSlots: 100, accountQueue: 4, globalQueue: 50, lifetimeMs: 3 * 3600_000, priceBumpPercent: 12 } });
  assert.equal(parseChainConfig(utf8Encode('{"tx-pool-lifetime": 600000000000}')).options, { mempool: { lifetimeMs: 600_000 } }, 'nanoseconds, as coreth writes durations');
  for (const [config, want] of [
    [{ 'tx-pool-global-slots': 0 }, /^invalid chain config file: tx-pool-global-slots: must be a whole number >= 1$/],
    [{ 'tx-pool-account-queue': -1 }, /^invalid chain config file: tx-pool-account-queue: must be a whole number >= 0$/],
    [{ 'tx-pool-lifetime': 'soon' }, /^invalid chain config file: tx-pool-lifetime: must be a duration/],
    [{ 'tx-pool-lifetime': 0 }, /^invalid chain config file: tx-pool-lifetime: must be a duration/],
  ] as const) {
    assert.throws(() => parseChainConfig(utf8Encode(JSON.stringify(config))), (e: Error) => want.test(e.message), JSON.stringify(config));
  }
  const err = await startVM({ opts: { mempool: { globalSlots: 0 } } }).then(() => undefined, (e: unknown) => e);
  assert.match(String((err as Error)?.message), /invalid chain option mempool.globalSlots: must be a whole number >= 1/);
  // Config keys reach the pool: tx-pool-account-queue 1.
  const vm = await startVM({ opts: { mempool: { accountQueue: 1 } }, genesis: fundedGenesis(1) });
  try {
    await send(vm, tx(1, 1));
    assert.match(await refusal(send(vm, tx(1, 2))), /^account limit exceeded/);
  } finally {
    await vm.shutdown();
  }
});

test('the pool alone: bookkeeping holds through replacement, promotion, demotion and acceptance (counts equal a recount)', () => {
  let now = 0;
  const pool = new Mempool({ globalSlots: 6, globalQueue: 5, accountQueue: 3, accountSlots: 2 }, { now: () => now });
  const entry = (k: number, nonce: number, price: bigint) => {
    const t = tx(k, nonce, { maxFee: price });
    const hash = t.hash();
    return { tx: t, hash, hashKey: hex(hash).slice(2), sender: addr(k), senderKey: hex(addr(k)).slice(2), nonce: BigInt(nonce), feeCap: price, tip: 0n, size: 120 };
  };
  const recount = () => {
    let executable = 0;
    let future = 0;
    for (const e of pool.entries()) e.queuedAt === undefined ? executable++ : future++;
    return { executable, future, executableSlots: executable, futureSlots: future };
  };
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const acc = new Map<number, number>();
  for (let i = 0; i < 3000; i++) {
    const k = 1 + rnd(5);
    const base = acc.get(k) ?? 0;
    const op = rnd(10);
    now += rnd(1000);
    if (op < 7) {
      try {
        pool.add(entry(k, base + rnd(6), BigInt(26 + rnd(40)) * GWEI), BigInt(base), 25n * GWEI);
      } catch (e) {
        assert.instance(e, EvmRpcError);
      }
    } else if (op < 8) {
      const all = [...pool.entries()];
      if (all.length) pool.remove(all[rnd(all.length)]!.hashKey);
    } else {
      const next = base + rnd(3);
      acc.set(k, next);
      pool.accepted(hex(addr(k)).slice(2), BigInt(next));
    }
    const s = pool.stats();
    assert.equal(s, recount(), `step ${i}`);
    assert.ok(s.executable + s.future <= 6 + 5 && s.future <= 5, `bounds at step ${i}: ${JSON.stringify(s)}`);
    // Each sender's executable txs are exactly its contiguous run from its accepted nonce.
    for (let k = 1; k <= 5; k++) {
      const mine = [...pool.entries()].filter((e) => e.senderKey === hex(addr(k)).slice(2));
      const nonces = new Set(mine.map((e) => e.nonce));
      let run = BigInt(acc.get(k) ?? 0);
      while (nonces.has(run)) run++;
      for (const e of mine) assert.is(e.queuedAt === undefined, e.nonce < run, `step ${i}: key ${k} nonce ${e.nonce} (run ends ${run})`);
      assert.is(pool.pendingNonce(hex(addr(k)).slice(2), BigInt(acc.get(k) ?? 0)), run);
      for (const e of mine) assert.ok(e.nonce >= BigInt(acc.get(k) ?? 0), `step ${i}: key ${k} holds nonce ${e.nonce} below its accepted ${acc.get(k)}`);
    }
  }
  // An admission that read the state before a block used its nonce: refused, not pooled below the accepted nonce.
  const fresh = new Mempool({}, { now: () => now });
  fresh.add(entry(1, 5, 30n * GWEI), 0n, 25n * GWEI);
  fresh.accepted(hex(addr(1)).slice(2), 2n);
  assert.throws(() => fresh.add(entry(1, 1, 99n * GWEI), 0n, 25n * GWEI), /^nonce too low: next nonce 2, tx nonce 1$/);
  assert.is(fresh.size, 1);
});

test.run();
