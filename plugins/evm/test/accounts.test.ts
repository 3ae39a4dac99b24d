import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Account, Address, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util';
import { Caches } from '@ethereumjs/statemanager';
import { createMPT } from '@ethereumjs/mpt';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { accountOf, encodeAccount, FastAccountStateManager } from '../src/chain/accounts.js';
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

test.run();
