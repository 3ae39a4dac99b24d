import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Account, Address, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util';
import { Caches } from '@ethereumjs/statemanager';
import { MerklePatriciaTrie, createMPT } from '@ethereumjs/mpt';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { accountOf, encodeAccount, FastAccountStateManager } from '../src/chain/state/accounts.js';
import { hex } from './helpers.js';

const QUANTITIES = [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 10n ** 18n, 2n ** 64n - 1n, 2n ** 255n, 2n ** 256n - 1n, 123456789012345678901234567890n];

test('the direct encoding is Account.serialize()\'s for nonces, balances and roots of every size class', () => {
  const roots = [KECCAK256_RLP, new Uint8Array(32).fill(0xab)];
  for (const nonce of QUANTITIES.filter((n) => n < 2n ** 64n)) {
    for (const balance of QUANTITIES) {
      for (const root of roots) {
        const a = new Account(nonce, balance, root, KECCAK256_NULL);
        assert.is(hex(encodeAccount(a)), hex(a.serialize()), `nonce ${nonce} balance ${balance}`);
      }
    }
  }
});

test('a decoded account is a copy: changing it does not change what the cache entry stands for', () => {
  const rlp = encodeAccount(new Account(5n, 1000n));
  const a = accountOf(rlp);
  a.balance -= 1n;
  a.nonce += 1n;
  const b = accountOf(rlp);
  assert.is(b.nonce, 5n);
  assert.is(b.balance, 1000n);
});

test('puts, gets, checkpoints, reverts and the state root agree with the stock state manager', async () => {
  const run = async (Sm: typeof MerkleStateManager) => {
    const sm = new Sm({ trie: await createMPT({ useKeyHashing: true }), caches: new Caches() });
    const addrs = Array.from({ length: 20 }, (_, i) => new Address(new Uint8Array(20).fill(i + 1)));
    const seen: string[] = [];
    for (const [i, a] of addrs.entries()) await sm.putAccount(a, new Account(BigInt(i), 10n ** BigInt(i)));
    await sm.checkpoint();
    for (const a of addrs.slice(0, 10)) {
      const acct = (await sm.getAccount(a))!;
      acct.balance += 7n;
      acct.nonce += 1n;
      await sm.putAccount(a, acct);
    }
    await sm.checkpoint();
    await sm.putAccount(addrs[0]!, new Account(99n, 99n));
    await sm.deleteAccount(addrs[1]!);
    await sm.revert();
    await sm.commit();
    for (const a of addrs) {
      const acct = await sm.getAccount(a);
      seen.push(acct ? `${acct.nonce}/${acct.balance}` : 'none');
    }
    seen.push(hex(await sm.getStateRoot()));
    return seen;
  };
  assert.equal(await run(FastAccountStateManager), await run(MerkleStateManager));
});

/** Runs `fn` counting the trie's one-by-one puts. */
async function countingPuts<T>(fn: () => Promise<T>): Promise<{ result: T; puts: number }> {
  const put = MerklePatriciaTrie.prototype.put;
  let puts = 0;
  MerklePatriciaTrie.prototype.put = function (this: MerklePatriciaTrie, ...args: Parameters<typeof put>) {
    puts++;
    return put.apply(this, args);
  };
  try {
    return { result: await fn(), puts };
  } finally {
    MerklePatriciaTrie.prototype.put = put;
  }
}

test('a flush writes the accounts as one trie update, with the stock root; deleting an absent account too; a real deletion goes one by one', async () => {
  const addrs = Array.from({ length: 40 }, (_, i) => new Address(Uint8Array.from({ length: 20 }, (_, j) => (i * 7 + j * 13) & 0xff)));
  const absent = new Address(new Uint8Array(20).fill(0xee));
  const rounds = async (Sm: typeof MerkleStateManager, deleteExisting: boolean) => {
    const sm = new Sm({ trie: await createMPT({ useKeyHashing: true }), caches: new Caches() });
    const roots: string[] = [];
    for (let r = 0; r < 4; r++) {
      await sm.checkpoint();
      for (const [i, a] of addrs.entries()) if ((i + r) % 3 !== 0) await sm.putAccount(a, new Account(BigInt(r), BigInt(i * 1000 + r)));
      // runTx's end of a transfer: the coinbase it touched is deleted while empty (absent from the trie)
      await sm.deleteAccount(absent);
      if (deleteExisting && r === 3) await sm.deleteAccount(addrs[1]!);
      await sm.commit();
      roots.push(hex(await sm.getStateRoot()));
    }
    return roots;
  };
  const fast = await countingPuts(() => rounds(FastAccountStateManager, false));
  const stock = await countingPuts(() => rounds(MerkleStateManager, false));
  assert.equal(fast.result, stock.result);
  assert.is(fast.puts, 0, 'no put one by one');
  assert.ok(stock.puts > 80);
  const fastDel = await countingPuts(() => rounds(FastAccountStateManager, true));
  const stockDel = await countingPuts(() => rounds(MerkleStateManager, true));
  assert.equal(fastDel.result, stockDel.result);
  assert.ok(fastDel.puts > 0, 'the round with a real deletion went one by one');
});

test('an account found absent is not looked up again while the trie has not gained it; once put, deleting it is a real deletion', async () => {
  const coinbase = new Address(new Uint8Array(20).fill(0xcb));
  const payer = new Address(new Uint8Array(20).fill(0x01));
  const run = async (Sm: typeof MerkleStateManager) => {
    const sm = new Sm({ trie: await createMPT({ useKeyHashing: true }), caches: new Caches() });
    const trie = (sm as unknown as { _trie: MerklePatriciaTrie })._trie;
    const get = trie.get.bind(trie);
    let gets = 0;
    trie.get = (...args: Parameters<typeof get>) => (gets++, get(...args));
    const roots: string[] = [];
    const perRound: number[] = [];
    for (let r = 0; r < 6; r++) {
      const before = gets;
      await sm.checkpoint();
      await sm.putAccount(payer, new Account(BigInt(r), 10n ** 18n - BigInt(r)));
      // Rounds 3 and 4: the coinbase is credited (created), then emptied and deleted: a real deletion.
      if (r === 3) await sm.putAccount(coinbase, new Account(0n, 5n));
      else await sm.deleteAccount(coinbase);
      await sm.commit();
      roots.push(hex(await sm.getStateRoot()));
      perRound.push(gets - before);
    }
    return { roots, perRound };
  };
  const fast = await run(FastAccountStateManager);
  const stock = await run(MerkleStateManager);
  assert.equal(fast.roots, stock.roots);
  assert.is(fast.perRound[0], 1, 'the first deletion looks the coinbase up');
  assert.is(fast.perRound[1], 0, 'the next block does not');
  assert.is(fast.perRound[2], 0);
  assert.ok(fast.perRound[4]! >= 1, 'after it was created, deleting it looks it up (and finds it)');
  assert.ok(fast.perRound[5]! >= 1, 'and after that real deletion, once more');
});

test('a slot write waits for the flush: no trie put per SSTORE, and the roots, reads and reverts are the stock ones', async () => {
  const contract = new Address(new Uint8Array(20).fill(0xc0));
  const slot = (i: number) => Uint8Array.from({ length: 32 }, (_, j) => (j === 31 ? i : 0));
  const run = async (Sm: typeof MerkleStateManager) => {
    const sm = new Sm({ trie: await createMPT({ useKeyHashing: true }), caches: new Caches() });
    const seen: string[] = [];
    await sm.putAccount(contract, new Account(1n, 0n));
    for (let r = 0; r < 3; r++) {
      await sm.checkpoint();
      // A loop's writes: the same slots again and again, one set to zero (a deletion).
      for (let i = 0; i < 50; i++) await sm.putStorage(contract, slot(i % 5), Uint8Array.of(0, r, i));
      await sm.putStorage(contract, slot(1), new Uint8Array(32));
      await sm.checkpoint();
      await sm.putStorage(contract, slot(2), Uint8Array.of(0xee));
      await sm.revert();
      for (let i = 0; i < 5; i++) seen.push(hex(await sm.getStorage(contract, slot(i))));
      await sm.commit();
      seen.push(hex(await sm.getStateRoot()));
      seen.push(hex((await sm.getAccount(contract))!.storageRoot));
    }
    return seen;
  };
  const fast = await countingPuts(() => run(FastAccountStateManager));
  const stock = await countingPuts(() => run(MerkleStateManager));
  assert.equal(fast.result, stock.result);
  assert.ok(stock.puts > 150, `stock puts ${stock.puts}`);
  assert.ok(fast.puts <= 3 * 5, `a put per slot per flush at most: ${fast.puts}`);
});

test.run();
