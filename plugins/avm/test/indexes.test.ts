// The `o` (address, asset, kind, largest amount first) and `w` (balance) indexes of the accepted
// state (state.ts), what issue 32's lock-out needed: they follow every accepted block, a database
// written without them gets them on open, and reads of one address's asset or page of UTXOs read
// only that, however many other UTXOs the address holds.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, PrivateKey, type KeyValueStore, type ShortId } from '@cornice/sdk';
import { producedUtxos, signTx, utxoId, type AssetVM, type MintOutput, type Tx, type Utxo } from '../src/index.js';
import {
  AVA,
  CHAIN_ID,
  EWOQ,
  GENESIS_AMOUNT,
  GOLD,
  GOLD_UTXO,
  NETWORK_ID,
  baseTx,
  createAssetTx,
  idOf,
  out,
  sendAva,
  settle,
  startVM,
  transfer,
} from './vm-helpers.js';

const ALICE = PrivateKey.fromBytes(new Uint8Array(32).fill(0x11));
const BOB = PrivateKey.fromBytes(new Uint8Array(32).fill(0x22));
const amountOf = (u: Utxo) => (u.out.kind === 'transfer' ? u.out.amount : 0n);
const byId = (a: Utxo, b: Utxo) => utxoId(a).compare(utxoId(b));
const largestFirst = (a: Utxo, b: Utxo) => (amountOf(a) === amountOf(b) ? byId(a, b) : amountOf(a) > amountOf(b) ? -1 : 1);
const keysOf = (us: Utxo[]) => us.map((u) => utxoId(u).toString());

async function collect(it: AsyncIterable<Utxo>, max = Infinity): Promise<Utxo[]> {
  const out: Utxo[] = [];
  for await (const u of it) {
    out.push(u);
    if (out.length >= max) break;
  }
  return out;
}

/** The indexes agree with the UTXOs themselves (the `a` index and the `u` records), for every address and asset named. */
async function checkIndexes(vm: AssetVM, addresses: ShortId[], assets: Id[]): Promise<void> {
  for (const a of addresses) {
    const mine = await vm.utxos([a]);
    const held: Array<{ assetId: string; amount: bigint }> = [];
    for (const asset of assets) {
      const of = mine.filter((u) => u.assetId.equals(asset));
      const transfers = of.filter((u) => u.out.kind === 'transfer');
      const sum = transfers.reduce((s, u) => s + amountOf(u), 0n);
      assert.is(await vm.balance(a, asset), sum, `balance of ${a} in ${asset}`);
      if (sum > 0n) held.push({ assetId: asset.toString(), amount: sum });
      assert.equal(keysOf(await collect(vm.utxosByAmount([a], asset, 'transfer'))), keysOf(transfers.sort(largestFirst)), `transfers of ${a} in ${asset}`);
      assert.equal(keysOf(await collect(vm.utxosByAmount([a], asset, 'mint'))), keysOf(of.filter((u) => u.out.kind === 'mint').sort(byId)), `mints of ${a} in ${asset}`);
    }
    const listed = (await vm.balances(a, 100)).map((b) => ({ assetId: b.assetId.toString(), amount: b.amount }));
    assert.equal(listed, held.sort((x, y) => Id.fromString(x.assetId).compare(Id.fromString(y.assetId))), `balances of ${a}`);
  }
}

function mintTx(assetId: Id, from: Utxo, amount: bigint, to: ShortId, signer: PrivateKey): Tx {
  const next: MintOutput = { kind: 'mint', threshold: 1, addresses: [signer.address] };
  return signTx(
    {
      kind: 'operation',
      networkId: NETWORK_ID,
      chainId: CHAIN_ID,
      outs: [],
      ins: [],
      ops: [{ assetId, utxos: [{ txId: from.txId, outputIndex: from.outputIndex }], op: { kind: 'mint', sigIndices: [0], mintOutput: next, transferOutput: transfer(amount, [to]) } }],
    },
    [[signer]],
  );
}

test('the o and w indexes follow every accepted block: multisig, locked, mint outputs, UTXOs made and spent in one block, all spent', async () => {
  const h = await startVM();
  const { vm } = h;
  const later = BigInt(h.clock.seconds + 3600);
  // Block 1: ewoq pays Alice, Alice and Bob jointly, Alice locked; Alice spends hers at once (same block); GOLD to Alice; a mint right for Alice.
  const t1 = baseTx(
    [{ utxo: (await vm.utxos([EWOQ.address])).find((u) => u.assetId.equals(AVA))!, keys: [EWOQ] }],
    [out(AVA, 100n, [ALICE.address]), out(AVA, 50n, [ALICE.address, BOB.address]), out(AVA, 7n, [ALICE.address], 1, later), out(AVA, 70n, [ALICE.address, BOB.address], 2), out(AVA, GENESIS_AMOUNT - 227n, [EWOQ.address])],
  );
  const aliceHundred = producedUtxos(idOf(t1), t1.unsigned).find((u) => amountOf(u) === 100n)!;
  const t2 = baseTx([{ utxo: aliceHundred, keys: [ALICE] }], [out(AVA, 60n, [BOB.address]), out(AVA, 40n, [ALICE.address])]);
  const t3 = baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 3n, [ALICE.address]), out(GOLD, 997n, [EWOQ.address])]);
  const variable = createAssetTx('Minted', 'MNT', [{ kind: 'mint', threshold: 1, addresses: [ALICE.address] }]);
  for (const tx of [t1, t2, t3, variable]) await vm.issueTx(tx);
  await settle(vm);
  const minted = idOf(variable);
  const everyone = [EWOQ.address, ALICE.address, BOB.address];
  await checkIndexes(vm, everyone, [AVA, GOLD, minted]);
  assert.is(await vm.balance(ALICE.address, AVA), 40n + 50n + 7n + 70n);
  assert.is(await vm.balance(BOB.address, AVA), 60n + 50n + 70n);
  // Block 2: Alice mints 9 to Bob; Bob spends the joint 50 (Alice's balance drops too) and all his GOLD-less AVA but the 2-of-2.
  const right = (await collect(vm.utxosByAmount([ALICE.address], minted, 'mint')))[0]!;
  const joint = (await vm.utxos([BOB.address])).find((u) => amountOf(u) === 50n)!;
  const sixty = (await vm.utxos([BOB.address])).find((u) => amountOf(u) === 60n)!;
  await vm.issueTx(mintTx(minted, right, 9n, BOB.address, ALICE));
  await vm.issueTx(baseTx([{ utxo: joint, keys: [ALICE], sigIndices: [joint.out.addresses.findIndex((a) => a.equals(ALICE.address))] }, { utxo: sixty, keys: [BOB] }], [out(AVA, 110n, [EWOQ.address])]));
  await settle(vm);
  await checkIndexes(vm, everyone, [AVA, GOLD, minted]);
  assert.is(await vm.balance(BOB.address, AVA), 70n);
  assert.is(await vm.balance(BOB.address, minted), 9n);
  assert.is(await vm.balance(ALICE.address, AVA), 40n + 7n + 70n);
});

test('the lock-out of issue 32 on the VM: ten free assets of 1,024 UTXOs to an address; its AVA balance and UTXOs, largest first, and pages of its UTXOs read only what they answer', async () => {
  const h = await startVM({ opts: { freeTxBytesPerMinute: 64 << 20 } });
  const { vm } = h;
  await vm.issueTx(sendAva(5_000n, ALICE.address));
  await settle(vm);
  for (let k = 0; k < 10; k++) {
    await vm.issueTx(createAssetTx(`Junk ${k}`, 'JNK', Array.from({ length: 1024 }, (_, i) => transfer(BigInt(i + 1), [ALICE.address]))));
    await settle(vm);
  }
  assert.is(await vm.balance(ALICE.address, AVA), 5_000n);
  const ava = await collect(vm.utxosByAmount([ALICE.address], AVA, 'transfer'));
  assert.equal(ava.map(amountOf), [5_000n]);
  assert.is((await vm.balances(ALICE.address, 1024)).length, 11);
  // Every UTXO, a page at a time, each once.
  const seen = new Set<string>();
  let start: { address: ShortId; utxoId: Id } | undefined;
  let pages = 0;
  for (;;) {
    const page = await vm.utxoPage([ALICE.address], start, 1024);
    pages += 1;
    for (const u of page.utxos) seen.add(utxoId(u).toString());
    start = page.end;
    if (page.utxos.length < 1024) break;
  }
  assert.is(seen.size, 10 * 1024 + 1);
  assert.is(pages, 11);
});

/** Deletes the `o`, `w` and `v` records from a chain's store: what a database written before them holds. */
async function dropIndexes(db: KeyValueStore): Promise<number> {
  let n = 0;
  for (const tag of [0x6f, 0x77, 0x76]) {
    const batch = db.batch();
    for await (const [k] of db.iterate({ prefix: Uint8Array.of(tag) })) {
      batch.delete(k);
      n += 1;
    }
    await batch.write();
  }
  return n;
}

/** A few blocks' worth of UTXOs of every kind; the assets they are of. */
async function someHistory(vm: AssetVM): Promise<Id[]> {
  await vm.issueTx(sendAva(1_000n, ALICE.address));
  await vm.issueTx(baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 3n, [ALICE.address, BOB.address]), out(GOLD, 997n, [EWOQ.address])]));
  const minted = await vm.issueTx(createAssetTx('Minted', 'MNT', [{ kind: 'mint', threshold: 1, addresses: [BOB.address] }, transfer(12n, [BOB.address])]));
  await settle(vm);
  return [AVA, GOLD, minted];
}

test('a database written before the o and w indexes gets them on open, as does one a version without them wrote to since (the v record names another block)', async () => {
  let h = await startVM();
  const assets = await someHistory(h.vm);
  const everyone = [EWOQ.address, ALICE.address, BOB.address];
  assert.ok((await dropIndexes(h.ctx.db)) > 0);
  h = await h.restart();
  await checkIndexes(h.vm, everyone, assets);
  assert.is(await h.vm.balance(ALICE.address, AVA), 1_000n);
  // Written by an older version since: the v record is of an earlier block, the indexes are stale.
  const stale = await h.ctx.db.get(Uint8Array.of(0x76));
  assert.ok(stale);
  await h.vm.issueTx(sendAva(5n, BOB.address, (await h.vm.utxos([EWOQ.address])).find((u) => amountOf(u) > 1_000_000n)));
  await settle(h.vm);
  const batch = h.ctx.db.batch();
  batch.put(Uint8Array.of(0x76), stale);
  // …and as an older version leaves them: a UTXO spent since still listed, a balance it did not change.
  const bogus = new Uint8Array(1 + 20 + 32);
  bogus[0] = 0x77;
  ALICE.address.copyTo(bogus, 1);
  Id.fromBytes(new Uint8Array(32).fill(9)).copyTo(bogus, 21);
  batch.put(bogus, Uint8Array.of(1));
  await batch.write();
  h = await h.restart();
  await checkIndexes(h.vm, everyone, [...assets, Id.fromBytes(new Uint8Array(32).fill(9))]);
  assert.is(await h.vm.balance(BOB.address, AVA), 5n);
  // Up to date: nothing is rebuilt on the next open.
  const before = await h.ctx.db.get(Uint8Array.of(0x76));
  h = await h.restart();
  assert.equal(await h.ctx.db.get(Uint8Array.of(0x76)), before);
});

test('on LevelDB: a data dir without the indexes is indexed on open, and balances survive a reopen', async () => {
  const { LevelStore } = await import('@cornice/core');
  const dir = await mkdtemp(join(tmpdir(), 'avm-index-'));
  try {
    let root = await LevelStore.open(dir);
    let h = await startVM({ root });
    const assets = await someHistory(h.vm);
    await dropIndexes(h.ctx.db);
    await h.vm.shutdown();
    await root.close();
    root = await LevelStore.open(dir);
    h = await startVM({ root, clock: h.clock });
    await checkIndexes(h.vm, [EWOQ.address, ALICE.address, BOB.address], assets);
    assert.is(await h.vm.balance(ALICE.address, AVA), 1_000n);
    assert.is(await h.vm.balance(BOB.address, GOLD), 3n);
    await h.vm.shutdown();
    await root.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
