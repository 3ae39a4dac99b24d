// The bound on what free txs make the node store (limits.ts, issue 32 point 13): txs that create an
// asset or make UTXOs of assets other than the native token are charged the bytes they make the node
// store, `free-tx-bytes-per-minute` a minute (default 4 MiB), on the chain's clock; past it they are
// refused with the seconds to wait, issued or gossiped; native transfers are never charged.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, ShortId, hasErrorCode, utf8Encode, type Id, type KeyValueStore } from '@cornice/sdk';
import { DEFAULT_FREE_TX_BYTES_PER_MINUTE, parseAvmConfig } from '../src/limits.js';
import { storedBytes } from '../src/state.js';
import { checkTx } from '../src/rules.js';
import { encodeTx, txIdOf, type Tx } from '../src/index.js';
import { AVA, AVA_UTXO, EWOQ, GENESIS_AMOUNT, GOLD, GOLD_UTXO, baseTx, createAssetTx, idOf, out, rejection, rejectsWith, sendAva, settle, startVM, transfer } from './vm-helpers.js';

const BOB = PrivateKey.fromBytes(new Uint8Array(32).fill(0x22));
const PEER = ShortId.fromBytes(new Uint8Array(20).fill(0x33));
const holders = (n: number, seed = 1) => Array.from({ length: n }, (_, i) => transfer(BigInt(i + 1), [PrivateKey.fromBytes(new Uint8Array(32).fill(seed)).address]));

test('parseAvmConfig: free-tx-bytes-per-minute, a whole number >= 1; other keys ignored and named; anything else InvalidConfig naming the key', () => {
  const parse = (json: string) => parseAvmConfig(utf8Encode(json));
  assert.equal(parse('{"free-tx-bytes-per-minute": 1048576, "pruning-enabled": true}'), { options: { freeTxBytesPerMinute: 1_048_576 }, ignored: ['pruning-enabled'] });
  assert.equal(parse('{}'), { options: {}, ignored: [] });
  assert.equal(parseAvmConfig(new Uint8Array(0)), { options: {}, ignored: [] });
  for (const [json, message] of [
    ['{"free-tx-bytes-per-minute": 0}', 'invalid chain config file: free-tx-bytes-per-minute: must be a whole number of bytes >= 1'],
    ['{"free-tx-bytes-per-minute": "4MiB"}', 'invalid chain config file: free-tx-bytes-per-minute: must be a whole number of bytes >= 1'],
    ['{"free-tx-bytes-per-minute": 1.5}', 'invalid chain config file: free-tx-bytes-per-minute: must be a whole number of bytes >= 1'],
    ['[1]', 'invalid chain config file: must be a JSON object'],
    ['{', 'invalid chain config file: not valid JSON'],
  ] as const) {
    const e = (() => {
      try {
        parse(json);
      } catch (err) {
        return err as Error;
      }
      throw new Error(`accepted ${json}`);
    })();
    assert.ok(hasErrorCode(e, 'InvalidConfig'), json);
    assert.is(e.message, message);
  }
});

/** Sum of key and value bytes in a store. */
async function storeBytes(db: KeyValueStore): Promise<number> {
  let n = 0;
  for await (const [k, v] of db.iterate()) n += k.length + v.length;
  return n;
}

test('storedBytes counts what accepting a tx makes the store hold: within the block\'s own few records of the growth measured', async () => {
  for (const [label, tx, owners] of [
    ['one holder', createAssetTx('One', 'ONE', holders(1)), 1],
    ['1,024 holders', createAssetTx('Many', 'MNY', Array.from({ length: 1024 }, (_, i) => transfer(1n, [PrivateKey.fromBytes(new Uint8Array(32).fill((i % 250) + 1)).address]))), 250],
    ['a GOLD transfer', baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 1n, [BOB.address]), out(GOLD, 999n, [EWOQ.address])]), 2],
  ] as const) {
    const h = await startVM({ opts: { freeTxBytesPerMinute: 64 << 20 } });
    const bytes = encodeTx(tx);
    const source = { utxo: async (id: Id) => (await h.vm.utxosById([id]))[0], imported: async () => undefined };
    const effect = await checkTx(tx, bytes, txIdOf(bytes), source, BigInt(h.clock.seconds), { networkId: 12345, chainId: h.ctx.chainId, nativeAsset: { id: AVA, symbol: 'AVA' } });
    const before = await storeBytes(h.ctx.db);
    await h.vm.issueTx(tx);
    await settle(h.vm);
    const grown = (await storeBytes(h.ctx.db)) - before;
    // The block's header and height record (~130 bytes) are the block's, not the tx's; each owner's
    // balance record is counted per UTXO (an upper bound: it is written once per owner and asset);
    // a spent UTXO's records go away (a transfer's growth is less than what its outputs take).
    const counted = storedBytes(effect);
    const spentBack = effect.spends.length * (33 + 72 + 24 + 20 + 53 + 94 + 62);
    assert.ok(counted >= grown - 140, `${label}: counted ${counted}, grown ${grown}`);
    assert.ok(counted <= grown + spentBack + (1024 - owners) * 62 + owners * 9 + 140, `${label}: counted ${counted}, grown ${grown}`);
  }
});

test('free txs past free-tx-bytes-per-minute are refused with RateLimited and the seconds to wait; the budget refills with the chain\'s clock', async () => {
  const h = await startVM({ opts: { freeTxBytesPerMinute: 100_000 } });
  let made = 0;
  let e: Error | undefined;
  for (let i = 0; i < 100 && !e; i++) {
    try {
      await h.vm.issueTx(createAssetTx(`Asset ${i}`, 'AST', holders(10, i + 1)));
      made += 1;
    } catch (err) {
      e = err as Error;
    }
  }
  assert.ok(made > 10 && made < 100, `${made} assets`);
  assert.ok(e && hasErrorCode(e, 'RateLimited'), String(e));
  assert.match(e!.message, /^free transactions on this chain are limited to 100000 bytes per minute \(those that create an asset or make UTXOs of an asset other than AVA\); try again in \d+ s$/);
  const data = (e as { data?: { retryAfterSeconds: number; limitBytesPerMinute: number; txBytes: number } }).data!;
  assert.is(data.limitBytesPerMinute, 100_000);
  assert.ok(data.retryAfterSeconds >= 1 && data.retryAfterSeconds <= 60);
  // Nothing was pooled for the refused one; native transfers still go in.
  assert.is(await h.vm.txStatus(idOf(createAssetTx(`Asset ${made}`, 'AST', holders(10, made + 1)))), 'Unknown');
  await h.vm.issueTx(sendAva(1n, BOB.address));
  // A transfer of another asset is free too (what is left is less than one asset of 10 holders).
  const split = Array.from({ length: 10 }, (_, i) => out(GOLD, BigInt(i + 1), [BOB.address]));
  await rejectsWith(h.vm.issueTx(baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [...split, out(GOLD, 945n, [EWOQ.address])])), 'RateLimited');
  h.clock.advance(data.retryAfterSeconds);
  await h.vm.issueTx(createAssetTx(`Asset ${made}`, 'AST', holders(10, made + 1)));
  await settle(h.vm);
});

test('a native transfer carrying UTXOs of another asset is free: charged; one moving only the native token is never charged, however many', async () => {
  const h = await startVM({ opts: { freeTxBytesPerMinute: 3_000 } });
  // 150 native outputs in one tx: not charged.
  const outs = Array.from({ length: 150 }, () => out(AVA, 1n, [BOB.address]));
  await h.vm.issueTx(baseTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [...outs, out(AVA, GENESIS_AMOUNT - 150n, [EWOQ.address])]));
  // AVA and GOLD in, AVA and GOLD out: charged for all it stores (~2,300 bytes: 3,000 is too little for twice).
  await settle(h.vm);
  const [ava] = (await h.vm.utxos([EWOQ.address])).filter((u) => u.assetId.equals(AVA));
  const mixed = (n: bigint) => baseTx([{ utxo: ava!, keys: [EWOQ] }, { utxo: GOLD_UTXO, keys: [EWOQ] }], [out(AVA, 1n + n, [BOB.address]), out(AVA, (ava!.out as { amount: bigint }).amount - 1n - n, [EWOQ.address]), out(GOLD, 1000n, [BOB.address])]);
  await h.vm.issueTx(mixed(0n));
  await rejectsWith(h.vm.issueTx(mixed(1n)), 'RateLimited');
});

test('a free tx storing more than a minute\'s worth is refused for good (Limit), naming the sizes', async () => {
  const h = await startVM({ opts: { freeTxBytesPerMinute: 5_000 } });
  const e = await rejectsWith(h.vm.issueTx(createAssetTx('Big', 'BIG', holders(100))), 'Limit');
  assert.match(e.message, /^this transaction would store \d+ bytes, more than the 5000 bytes a minute free transactions may store on this chain \(free-tx-bytes-per-minute\); make it smaller$/);
});

test('gossiped free txs count too: past the budget they are not pooled (a block holding them is still accepted)', async () => {
  const sent: Uint8Array[] = [];
  const issuer = await startVM({ network: { gossip: (p) => void sent.push(p) }, opts: { freeTxBytesPerMinute: 64 << 20 } });
  const receiver = await startVM({ opts: { freeTxBytesPerMinute: 3_000 } });
  const txs: Tx[] = [0, 1, 2, 3].map((i) => createAssetTx(`Gossiped ${i}`, 'GSP', holders(2, i + 1)));
  for (const tx of txs) await issuer.vm.issueTx(tx);
  await new Promise((r) => setImmediate(r));
  for (const p of sent) await receiver.vm.onGossip(PEER, p);
  const statuses = await Promise.all(txs.map((tx) => receiver.vm.txStatus(idOf(tx))));
  assert.ok(statuses.includes('Unknown') && statuses.includes('Processing'), statuses.join());
  // The issuer's block with all four verifies and is accepted on the receiver.
  const [block] = await settle(issuer.vm);
  const parsed = await receiver.vm.parseBlock(block!.bytes);
  await parsed.verify();
  await receiver.vm.setPreference(parsed.id);
  await parsed.accept();
  for (const tx of txs) assert.is(await receiver.vm.txStatus(idOf(tx)), 'Accepted');
});

test('the chain config sets free-tx-bytes-per-minute (over the option); a bad one fails initialize naming the key; the default is 4 MiB', async () => {
  assert.is(DEFAULT_FREE_TX_BYTES_PER_MINUTE, 4 * 1024 * 1024);
  const h = await startVM({ opts: { freeTxBytesPerMinute: 64 << 20 }, config: utf8Encode('{"free-tx-bytes-per-minute": 1000}') });
  await rejectsWith(h.vm.issueTx(createAssetTx('Big', 'BIG', holders(10))), 'Limit');
  const e = await rejection(startVM({ config: utf8Encode('{"free-tx-bytes-per-minute": -5}') }));
  assert.ok(hasErrorCode(e, 'InvalidConfig'));
  assert.is(e.message, 'invalid chain config file: free-tx-bytes-per-minute: must be a whole number of bytes >= 1');
  // The default lets ~10 assets of 1,024 holders a minute through, and not 20.
  const d = await startVM();
  let made = 0;
  for (let i = 0; i < 20; i++) {
    try {
      await d.vm.issueTx(createAssetTx(`Many ${i}`, 'MNY', holders(1024, i + 1)));
      made += 1;
    } catch (err) {
      assert.ok(hasErrorCode(err, 'RateLimited'));
      break;
    }
  }
  assert.ok(made >= 8 && made < 20, `${made}`);
});

test.run();
