import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, MemoryStore, PrivateKey, hasErrorCode, recoveryPoolEnabled, signerRecoveries, vmIdFromName, type ShortId } from '@cornice/sdk';
import { AssetVM, decodeTx, encodeGenesis, encodeTx, utxoId, type AvmBlock } from '../src/index.js';
import {
  AVA,
  AVA_UTXO,
  CHAIN_ID,
  EWOQ,
  GENESIS_AMOUNT,
  GENESIS_ASSETS,
  GOLD,
  GOLD_UTXO,
  ManualClock,
  balance,
  baseTx,
  eventWithin,
  idOf,
  out,
  rejectsWith,
  sendAva,
  settle,
  startVM,
  transfer,
  utxoOf,
} from './vm-helpers.js';

const ALICE = PrivateKey.fromBytes(new Uint8Array(32).fill(0x11));
const BOB = PrivateKey.fromBytes(new Uint8Array(32).fill(0x22));

test('genesis: height 0, ewoq holds the genesis UTXOs, assets by alias, symbol, NATIVE and ID', async () => {
  const { vm } = await startVM();
  const g = await vm.getBlock(await vm.lastAccepted());
  assert.is(g.height, 0);
  assert.ok((await vm.getBlockIdAtHeight(0)).equals(g.id));
  assert.is(await balance(vm, EWOQ.address), GENESIS_AMOUNT);
  assert.is(await balance(vm, EWOQ.address, GOLD), 1000n);
  const utxos = await vm.utxos([EWOQ.address]);
  assert.is(utxos.length, 2);
  assert.ok(utxos[0]!.txId.equals(AVA) || utxos[0]!.txId.equals(GOLD));
  assert.ok(utxoId(utxos[0]!).compare(utxoId(utxos[1]!)) < 0, 'in UTXO ID order');
  assert.is((await vm.utxos([EWOQ.address], 1)).length, 1);
  assert.is(vm.nativeAsset()?.assetId.toString(), AVA.toString());
  for (const name of ['AVA', 'NATIVE', AVA.toString()]) {
    const a = await vm.asset(name);
    assert.ok(a?.assetId.equals(AVA), name);
    assert.is(a?.denomination, 9);
  }
  assert.is((await vm.asset('GOLD'))?.symbol, 'GLD');
  assert.is((await vm.asset(GOLD.toString()))?.alias, 'GOLD', 'genesis assets carry their alias');
  assert.is(vm.nativeAsset()?.alias, 'AVA');
  assert.is(await vm.asset('nope'), undefined);
  assert.is(await vm.asset(Id.fromBytes(new Uint8Array(32).fill(3)).toString()), undefined);
  assert.is(await vm.txStatus(AVA), 'Accepted');
  assert.equal(await vm.getTx(AVA), encodeTx({ unsigned: GENESIS_ASSETS[0]!.tx, creds: [] }));
  assert.is(vm.networkId, 12345);
  assert.ok(vm.chainId.equals(CHAIN_ID));
  assert.ok(vm.platformChainId.equals(Id.empty));
  assert.equal([...vm.aliases], ['X', 'avm']);
});

test("the local network's X-Chain: its genesis, the AVA asset ID, a transfer signed with the ewoq key accepted", async () => {
  const { networkGenesis } = await import('@cornice/core');
  const local = networkGenesis(12345)!;
  const xChain = local.platform.chains.find((c) => c.vmId.equals(vmIdFromName('avm')))!;
  const chainId = Id.fromString('4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
  const { vm } = await startVM({ genesis: xChain.genesisData, chainId, nativeId: local.nativeAssetId });
  const ava = vm.nativeAsset()!;
  assert.is(ava.assetId.toString(), 'n8XH5JY1EX5VYqDeAhB4Zd4GKxi9UNQy6oPpMsCAj1Q6xkiiL');
  assert.is(EWOQ.address.toString(), '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
  assert.is(await balance(vm, EWOQ.address, ava.assetId), GENESIS_AMOUNT);
  const [genesisUtxo] = await vm.utxos([EWOQ.address]);
  const tx = baseTx([{ utxo: genesisUtxo!, keys: [EWOQ] }], [out(ava.assetId, 1_000n, [ALICE.address]), out(ava.assetId, GENESIS_AMOUNT - 1_000n, [EWOQ.address])], { chainId });
  await vm.issueTx(tx);
  await settle(vm);
  assert.is(await vm.txStatus(idOf(tx)), 'Accepted');
  assert.is(await balance(vm, ALICE.address, ava.assetId), 1_000n);
});

test('genesis block is deterministic: the same genesis gives the same block ID', async () => {
  const a = await startVM();
  const b = await startVM();
  assert.ok((await a.vm.lastAccepted()).equals(await b.vm.lastAccepted()));
  const other = await startVM({ genesis: encodeGenesis([GENESIS_ASSETS[0]!]) });
  assert.not.ok((await a.vm.lastAccepted()).equals(await other.vm.lastAccepted()));
});

test('initialize refuses a database made from another genesis, and malformed genesis bytes', async () => {
  const h = await startVM();
  await h.vm.shutdown();
  await rejectsWith(startVM({ root: h.root, genesis: encodeGenesis([GENESIS_ASSETS[0]!]) }), 'InvalidGenesis', /another genesis/);
  await rejectsWith(startVM({ genesis: Uint8Array.of(1, 2, 3) }), 'InvalidGenesis', /malformed/);
});

test('the native asset is the genesis asset whose alias or symbol is the node native symbol', async () => {
  const { vm } = await startVM({ symbol: 'GLD' });
  assert.ok(vm.nativeAsset()?.assetId.equals(GOLD));
  assert.ok((await vm.asset('NATIVE'))?.assetId.equals(GOLD));
  const none = await startVM({ symbol: 'XYZ' });
  assert.is(none.vm.nativeAsset(), undefined);
  assert.is(await none.vm.asset('NATIVE'), undefined);
});

test('a transfer signed with the ewoq key: Processing, built, accepted, balances moved, listeners told', async () => {
  const { vm } = await startVM();
  const decided: string[] = [];
  vm.onTxDecided((id, status) => decided.push(`${id}:${status}`));
  const tx = sendAva(1_000n, ALICE.address);
  const id = await vm.issueTx(tx);
  assert.ok(id.equals(idOf(tx)));
  assert.is(await vm.txStatus(id), 'Processing');
  assert.equal(await vm.getTx(id), encodeTx(tx));
  assert.ok(await eventWithin(vm, 1000));
  const [block] = await settle(vm);
  assert.is(block!.height, 1);
  assert.is(await vm.txStatus(id), 'Accepted');
  assert.equal(await vm.getTx(id), encodeTx(tx));
  assert.is(await balance(vm, ALICE.address), 1_000n);
  assert.is(await balance(vm, EWOQ.address), GENESIS_AMOUNT - 1_000n);
  assert.equal(decided, [`${id}:accepted`]);
  assert.is((await vm.utxosById([utxoId(AVA_UTXO), utxoId(utxoOf(tx, 0))])).filter(Boolean).length, 1, 'the genesis UTXO is spent');
  assert.is(await vm.txStatus(Id.fromBytes(new Uint8Array(32).fill(9))), 'Unknown');
  assert.is(await vm.getTx(Id.fromBytes(new Uint8Array(32).fill(9))), undefined);
});

test('issuing the same tx twice gives its ID; an accepted one too, without building it again', async () => {
  const { vm } = await startVM();
  const tx = sendAva(5n, ALICE.address);
  const id = await vm.issueTx(tx);
  assert.ok((await vm.issueTx(decodeTx(encodeTx(tx)))).equals(id));
  await settle(vm);
  assert.ok((await vm.issueTx(tx)).equals(id));
  assert.is((await settle(vm)).length, 0);
});

test('txs spending outputs of txs in flight: issued, built on the preferred branch, the branch txs skipped', async () => {
  const { vm } = await startVM();
  const tx1 = sendAva(100n, ALICE.address);
  await vm.issueTx(tx1);
  const b1 = await vm.buildBlock();
  await b1.verify();
  await vm.setPreference(b1.id);
  assert.not.ok(await eventWithin(vm, 30), 'tx1 is already on the preferred branch');
  await rejectsWith(vm.buildBlock(), 'NothingToBuild');
  // tx2 spends tx1's change (made by a processing block).
  const tx2 = sendAva(7n, BOB.address, outputTo(tx1, EWOQ.address));
  await vm.issueTx(tx2);
  assert.ok(await eventWithin(vm, 1000));
  const b2 = await vm.buildBlock();
  assert.ok(b2.parentId.equals(b1.id));
  assert.is(b2.height, 2);
  assert.is((b2 as AvmBlock).txBytes.length, 1);
  await b2.verify();
  await b1.accept();
  await b2.accept();
  assert.is(await balance(vm, BOB.address), 7n);
  assert.is(await balance(vm, ALICE.address), 100n);
  assert.is(await balance(vm, EWOQ.address), GENESIS_AMOUNT - 107n);
});

/** The output of `tx` owned by `address`. */
function outputTo(tx: ReturnType<typeof sendAva>, address: ShortId) {
  for (let i = 0; i < tx.unsigned.outs.length; i++) {
    const u = utxoOf(tx, i);
    if (u.out.addresses.some((a) => a.equals(address))) return u;
  }
  throw new TypeError('no such output');
}

test('two conflicting txs in flight: both Processing, one Accepted, the other Rejected for good', async () => {
  const { vm } = await startVM();
  const decided: string[] = [];
  vm.onTxDecided((id, status) => decided.push(`${id}:${status}`));
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address);
  const id1 = await vm.issueTx(tx1);
  const id2 = await vm.issueTx(tx2);
  assert.is(await vm.txStatus(id2), 'Processing');
  const blocks = await settle(vm);
  assert.is(blocks.length, 1);
  assert.is(blocks[0]!.txBytes.length, 1, 'the builder never puts both in a block');
  assert.is(await vm.txStatus(id1), 'Accepted');
  assert.is(await vm.txStatus(id2), 'Rejected');
  assert.is(await vm.getTx(id2), undefined);
  assert.equal(decided, [`${id1}:accepted`, `${id2}:rejected`]);
  assert.not.ok(await eventWithin(vm, 30), 'nothing left to build');
  await rejectsWith(vm.issueTx(tx2), 'InvalidTx', /rejected/);
  assert.is(await balance(vm, BOB.address), 0n);
});

test('a pooled tx spending what a rejected tx would have made is rejected too', async () => {
  const { vm } = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const loser = sendAva(2n, BOB.address);
  const child = baseTx([{ utxo: outputTo(loser, BOB.address), keys: [BOB] }], [out(AVA, 1n, [ALICE.address])]);
  await vm.issueTx(tx1);
  await vm.issueTx(loser);
  await vm.issueTx(child);
  await settle(vm);
  assert.is(await vm.txStatus(idOf(loser)), 'Rejected');
  assert.is(await vm.txStatus(idOf(child)), 'Rejected');
});

test('double spend within a block: verify refuses it', async () => {
  const a = await startVM();
  const b = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address);
  // Node b builds a block of tx1; its bytes are rewritten to hold tx2 as well.
  await b.vm.issueTx(tx1);
  const built = await b.vm.buildBlock();
  const { encodeBlock } = await import('../src/index.js');
  const bytes = encodeBlock({ parentId: built.parentId, height: 1, timestamp: built.timestamp, txs: [encodeTx(tx1), encodeTx(tx2)] });
  const block = await a.vm.parseBlock(bytes);
  await rejectsWith(block.verify(), 'InvalidBlock', /double spend/);
});

test('double spend across blocks: a child block spending what its processing parent spent, and after it was accepted', async () => {
  const a = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address);
  await a.vm.issueTx(tx1);
  const b1 = await a.vm.buildBlock();
  await b1.verify();
  const { encodeBlock } = await import('../src/index.js');
  const child = await a.vm.parseBlock(encodeBlock({ parentId: b1.id, height: 2, timestamp: b1.timestamp, txs: [encodeTx(tx2)] }));
  await rejectsWith(child.verify(), 'InvalidBlock', /double spend/);
  await a.vm.setPreference(b1.id);
  await b1.accept();
  const later = await a.vm.parseBlock(encodeBlock({ parentId: b1.id, height: 2, timestamp: b1.timestamp + 1, txs: [encodeTx(tx2)] }));
  await rejectsWith(later.verify(), 'InvalidBlock', /missing utxo/);
  await rejectsWith(a.vm.issueTx(tx2), 'InvalidTx', /missing utxo/);
  assert.is(await a.vm.txStatus(idOf(tx2)), 'Unknown');
});

test('wrong network or chain ID, insufficient funds, wrong amount, missing UTXO: refused at issue, nothing stored', async () => {
  const { vm } = await startVM();
  const cases: Array<[ReturnType<typeof baseTx>, RegExp]> = [
    [baseTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [out(AVA, 1n, [ALICE.address])], { networkId: 1 }), /wrong network ID/],
    [baseTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [out(AVA, 1n, [ALICE.address])], { chainId: Id.fromBytes(new Uint8Array(32).fill(8)) }), /wrong chain ID/],
    [baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 1001n, [ALICE.address])]), /insufficient funds/],
    [
      baseTx([{ utxo: { ...AVA_UTXO, out: transfer(5n, [EWOQ.address]) }, keys: [EWOQ] }], [out(AVA, 5n, [ALICE.address])]),
      /input is consuming a different amount than expected/,
    ],
    [baseTx([{ utxo: { ...AVA_UTXO, outputIndex: 3 }, keys: [EWOQ] }], [out(AVA, 5n, [ALICE.address])]), /missing utxo/],
    [baseTx([{ utxo: { ...GOLD_UTXO, assetId: AVA }, keys: [EWOQ] }], [out(AVA, 5n, [ALICE.address])]), /asset IDs in the input don't match the utxo/],
  ];
  for (const [tx, message] of cases) {
    await rejectsWith(vm.issueTx(tx), 'InvalidTx', message);
    assert.is(await vm.txStatus(idOf(tx)), 'Unknown');
  }
  assert.not.ok(await eventWithin(vm, 20));
  assert.is((await settle(vm)).length, 0);
});

test('signatures: wrong signer, too few or too many, an index past the owners', async () => {
  const { vm } = await startVM();
  // A 2-of-3 UTXO owned by ALICE, BOB and ewoq.
  const owners = [ALICE, BOB, EWOQ];
  const fund = baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 1000n, owners.map((k) => k.address), 2)]);
  await vm.issueTx(fund);
  await settle(vm);
  const multi = utxoOf(fund, 0);
  const sorted = [...owners].sort((x, y) => x.address.compare(y.address));
  const spend = (keys: PrivateKey[], sigIndices: number[]) => baseTx([{ utxo: multi, keys, sigIndices }], [out(GOLD, 1000n, [ALICE.address])]);
  await rejectsWith(vm.issueTx(spend([sorted[0]!], [0])), 'InvalidTx', /input has less signers than expected/);
  await rejectsWith(vm.issueTx(spend(sorted, [0, 1, 2])), 'InvalidTx', /input has more signers than expected/);
  await rejectsWith(vm.issueTx(spend([sorted[1]!, sorted[0]!], [0, 1])), 'InvalidTx', /credential does not produce expected signer/);
  await rejectsWith(vm.issueTx(spend([sorted[0]!, sorted[1]!], [0, 3])), 'InvalidTx', /input referenced a nonexistent address in the output/);
  await rejectsWith(vm.issueTx(baseTx([{ utxo: AVA_UTXO, keys: [ALICE] }], [out(AVA, 1n, [ALICE.address])])), 'InvalidTx', /credential does not produce expected signer/);
  const ok = spend([sorted[0]!, sorted[2]!], [0, 2]);
  await vm.issueTx(ok);
  await settle(vm);
  assert.is(await vm.txStatus(idOf(ok)), 'Accepted');
  assert.is(await balance(vm, ALICE.address, GOLD), 1000n);
});

test('timelock: a locked output cannot be spent before its locktime (chain time), then can', async () => {
  const h = await startVM();
  const { vm, clock } = h;
  const lockUntil = BigInt(clock.seconds + 100);
  const fund = baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 1000n, [ALICE.address], 1, lockUntil)]);
  await vm.issueTx(fund);
  await settle(vm);
  const locked = utxoOf(fund, 0);
  const spend = baseTx([{ utxo: locked, keys: [ALICE] }], [out(GOLD, 1000n, [BOB.address])]);
  await rejectsWith(vm.issueTx(spend), 'InvalidTx', /output is time locked/);
  clock.advance(100);
  await vm.issueTx(spend);
  await settle(vm);
  assert.is(await balance(vm, BOB.address, GOLD), 1000n);
});

test('a block holding a tx with trailing bytes is refused at parse', async () => {
  const { vm } = await startVM();
  const { encodeBlock } = await import('../src/index.js');
  const txBytes = encodeTx(sendAva(1n, ALICE.address));
  const padded = new Uint8Array(txBytes.length + 1);
  padded.set(txBytes);
  const bytes = encodeBlock({ parentId: await vm.lastAccepted(), height: 1, timestamp: 0, txs: [padded] });
  await rejectsWith(vm.parseBlock(bytes), 'Malformed', /has 1 leftover bytes after unmarshalling/);
  await rejectsWith(vm.parseBlock(Uint8Array.of(1, 2, 3)), 'Malformed');
});

test('block checks: height, timestamps, an unknown parent, no txs', async () => {
  const { vm, clock } = await startVM();
  const { encodeBlock } = await import('../src/index.js');
  const g = await vm.lastAccepted();
  const tx = encodeTx(sendAva(1n, ALICE.address));
  const now = clock.seconds;
  const parse = (o: { parentId?: Id; height?: number; timestamp?: number; txs?: Uint8Array[] }) =>
    vm.parseBlock(encodeBlock({ parentId: o.parentId ?? g, height: o.height ?? 1, timestamp: o.timestamp ?? now, txs: o.txs ?? [tx] }));
  await rejectsWith((await parse({ height: 2 })).verify(), 'InvalidBlock', /height/);
  await rejectsWith((await parse({ timestamp: now + 11 })).verify(), 'InvalidBlock', /ahead of local time/);
  await rejectsWith((await parse({ parentId: Id.fromBytes(new Uint8Array(32).fill(5)) })).verify(), 'InvalidBlock', /parent/);
  await rejectsWith((await parse({ txs: [] })).verify(), 'InvalidBlock', /at least one tx/);
  const good = await parse({});
  assert.is(good.height, 1);
  await good.verify();
  const early = await vm.parseBlock(encodeBlock({ parentId: good.id, height: 2, timestamp: now - 1, txs: [encodeTx(sendAva(3n, BOB.address))] }));
  await rejectsWith(early.verify(), 'InvalidBlock', /before its parent/);
});

test('a tx is checked once: no signature is recovered again at build, verify and accept', async () => {
  const { vm } = await startVM();
  const tx = sendAva(1n, ALICE.address);
  const before = signerRecoveries();
  await vm.issueTx(tx);
  // Recovered once: on the sdk's worker thread when it runs (more than one CPU), else inline.
  const once = recoveryPoolEnabled() ? 0 : 1;
  assert.is(signerRecoveries() - before, once);
  await settle(vm);
  assert.is(signerRecoveries() - before, once);
});

test('a block of another node holding pooled txs is verified without checking them again', async () => {
  const a = await startVM();
  const b = await startVM();
  const tx = sendAva(1n, ALICE.address);
  await a.vm.issueTx(decodeTx(encodeTx(tx)));
  await b.vm.issueTx(tx);
  const built = await b.vm.buildBlock();
  const before = signerRecoveries();
  const parsed = await a.vm.parseBlock(built.bytes);
  await parsed.verify();
  assert.is(signerRecoveries() - before, 0);
  await a.vm.setPreference(parsed.id);
  await parsed.accept();
  assert.is(await a.vm.txStatus(idOf(tx)), 'Accepted');
});

test('a block of another node is parsed without decoding the txs this node holds again', async () => {
  const a = await startVM();
  const b = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address, outputTo(tx1, EWOQ.address));
  const pooled = decodeTx(encodeTx(tx1));
  await a.vm.issueTx(pooled);
  for (const tx of [tx1, tx2]) await b.vm.issueTx(tx);
  const parsed = await a.vm.parseBlock((await b.vm.buildBlock()).bytes);
  assert.is(parsed.txs?.length, 2);
  assert.ok(parsed.txs![0] === pooled, 'the pooled tx itself');
  assert.equal(parsed.txs![1], decodeTx(encodeTx(tx2))); // new here: decoded
  await parsed.verify();
  await a.vm.setPreference(parsed.id);
  await parsed.accept();
  assert.is(await a.vm.txStatus(idOf(tx2)), 'Accepted');
});

test('a rejected block loses nothing: its txs are built again, those of another node go back to the pool', async () => {
  const a = await startVM();
  const b = await startVM();
  const tx = sendAva(1n, ALICE.address);
  await a.vm.issueTx(tx);
  const built = await a.vm.buildBlock();
  await built.verify();
  await built.reject();
  assert.is(await a.vm.txStatus(idOf(tx)), 'Processing');
  assert.is((await settle(a.vm)).length, 1);
  assert.is(await a.vm.txStatus(idOf(tx)), 'Accepted');

  const foreign = await b.vm.parseBlock(built.bytes);
  await foreign.verify();
  assert.is(await b.vm.txStatus(idOf(tx)), 'Processing');
  await foreign.reject();
  assert.is(await b.vm.txStatus(idOf(tx)), 'Processing');
  const rebuilt = await settle(b.vm);
  assert.is(rebuilt.length, 1);
  assert.is(await b.vm.txStatus(idOf(tx)), 'Accepted');
});

test('rejecting a block whose txs its accepted sibling holds reads no tx status from the database', async () => {
  class CountingStore extends MemoryStore {
    gets = 0;
    override async get(key: Uint8Array): Promise<Uint8Array | undefined> {
      this.gets += 1;
      return super.get(key);
    }
  }
  const root = new CountingStore();
  const a = await startVM({ root });
  const b = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address, outputTo(tx1, EWOQ.address));
  for (const tx of [tx1, tx2]) await a.vm.issueTx(tx);
  await b.vm.issueTx(tx1);
  const foreign = await a.vm.parseBlock((await b.vm.buildBlock()).bytes); // tx1 alone
  await foreign.verify();
  const mine = await a.vm.buildBlock();
  await mine.verify();
  assert.is(mine.txs?.length, 2);
  await a.vm.setPreference(mine.id);
  await mine.accept();
  const before = root.gets;
  await foreign.reject();
  assert.is(root.gets - before, 0);
  assert.is(await a.vm.txStatus(idOf(tx1)), 'Accepted');
  assert.is(await a.vm.txStatus(idOf(tx2)), 'Accepted');
});

test('a tx of a rejected block that conflicts with an accepted one is Rejected', async () => {
  const { vm } = await startVM();
  const other = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address);
  await other.vm.issueTx(tx2);
  const foreign = await vm.parseBlock((await other.vm.buildBlock()).bytes);
  await foreign.verify();
  await vm.issueTx(tx1);
  const mine = await vm.buildBlock();
  await mine.verify();
  await vm.setPreference(mine.id);
  await mine.accept();
  await foreign.reject();
  assert.is(await vm.txStatus(idOf(tx1)), 'Accepted');
  assert.is(await vm.txStatus(idOf(tx2)), 'Rejected');
});

test('a throwing or rejecting listener does not break the VM', async () => {
  const { vm } = await startVM();
  const seen: string[] = [];
  vm.onTxDecided(() => {
    throw new TypeError('boom');
  });
  vm.onTxDecided(async () => {
    throw new TypeError('async boom');
  });
  const off = vm.onTxDecided((_id, status) => seen.push(status));
  await vm.issueTx(sendAva(1n, ALICE.address));
  await settle(vm);
  assert.equal(seen, ['accepted']);
  off();
  await vm.issueTx(sendAva(1n, BOB.address, outputTo(sendAva(1n, ALICE.address), EWOQ.address)));
  await settle(vm);
  assert.equal(seen, ['accepted']);
});

test('waitForEvent: resolves when a tx is issued while waiting; rejects promptly on abort and on shutdown', async () => {
  const { vm } = await startVM();
  const ac = new AbortController();
  const waiting = vm.waitForEvent(ac.signal);
  await vm.issueTx(sendAva(1n, ALICE.address));
  assert.is(await waiting, 'pendingTxs');
  await settle(vm);
  const aborted = new AbortController();
  const p = vm.waitForEvent(aborted.signal);
  setTimeout(() => aborted.abort(), 5);
  await rejectsWith(p, 'NotRunning', /aborted/);
  const q = vm.waitForEvent(new AbortController().signal);
  setTimeout(() => void vm.shutdown(), 5);
  await rejectsWith(q, 'NotRunning', /shut down/);
  await rejectsWith(vm.lastAccepted(), 'NotRunning');
});

test('waitForEvent sleeps until a pooled tx is unlocked, then resolves', async () => {
  const timers: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  const fake = {
    setTimeout(fn: () => void, ms: number) {
      const t = { fn, ms, cancelled: false };
      timers.push(t);
      return { cancel: () => void (t.cancelled = true) };
    },
  };
  const a = await startVM({ opts: { timers: fake } });
  const b = await startVM({ clock: new ManualClock(a.clock.ms + 5_000) });
  // Both chains accept a block making an output locked for 3 s more (by a's clock).
  const fund = baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 1000n, [ALICE.address], 1, BigInt(a.clock.seconds + 3))]);
  await a.vm.issueTx(fund);
  const [b1] = await settle(a.vm);
  const onB = await b.vm.parseBlock(b1!.bytes);
  await onB.verify();
  await b.vm.setPreference(onB.id);
  await onB.accept();
  // b, 5 s ahead, spends it in a block a verifies (5 s ahead is allowed), then rejects: the tx is pooled on a.
  const spend = baseTx([{ utxo: utxoOf(fund, 0), keys: [ALICE] }], [out(GOLD, 1000n, [BOB.address])]);
  await b.vm.issueTx(spend);
  const foreign = await a.vm.parseBlock((await b.vm.buildBlock()).bytes);
  await foreign.verify();
  await foreign.reject();
  assert.is(await a.vm.txStatus(idOf(spend)), 'Processing');
  let resolved = false;
  const waiting = a.vm.waitForEvent(new AbortController().signal).then((e) => ((resolved = true), e));
  await new Promise((r) => setTimeout(r, 20));
  assert.not.ok(resolved, 'locked for 3 s more');
  const timer = timers.find((t) => !t.cancelled);
  assert.is(timer?.ms, 3_000);
  a.clock.advance(3);
  timer!.fn();
  assert.is(await waiting, 'pendingTxs');
  await settle(a.vm);
  assert.is(await a.vm.txStatus(idOf(spend)), 'Accepted');
});

test('a block holds at most 1000 txs; the rest go in the next one', async () => {
  const { vm } = await startVM();
  const { createAssetTx } = await import('./vm-helpers.js');
  for (let i = 0; i < 1005; i++) await vm.issueTx(createAssetTx(`Coin ${i}`, 'C', [transfer(1n, [ALICE.address])]));
  const blocks = await settle(vm);
  assert.equal(
    blocks.map((b) => b.txBytes.length),
    [1000, 5],
  );
});

test('an input-less tx accepted once cannot be accepted again', async () => {
  const { vm } = await startVM();
  const { createAssetTx } = await import('./vm-helpers.js');
  const { encodeBlock } = await import('../src/index.js');
  const tx = createAssetTx('Once', 'ONE', [transfer(5n, [ALICE.address])]);
  await vm.issueTx(tx);
  const [b1] = await settle(vm);
  const again = await vm.parseBlock(encodeBlock({ parentId: b1!.id, height: 2, timestamp: b1!.timestamp, txs: [encodeTx(tx)] }));
  await rejectsWith(again.verify(), 'InvalidBlock', /already accepted/);
  assert.is(await balance(vm, ALICE.address, idOf(tx)), 5n);
});

test('restart: accepted blocks, UTXOs, tx statuses (Rejected too) and the mempool-free state survive', async () => {
  const h = await startVM();
  const tx1 = sendAva(1n, ALICE.address);
  const tx2 = sendAva(2n, BOB.address);
  await h.vm.issueTx(tx1);
  await h.vm.issueTx(tx2);
  const [b] = await settle(h.vm);
  const again = await h.restart();
  assert.ok((await again.vm.lastAccepted()).equals(b!.id));
  assert.ok((await again.vm.getBlockIdAtHeight(1)).equals(b!.id));
  assert.is((await again.vm.getBlock(b!.id)).height, 1);
  assert.is(await again.vm.txStatus(idOf(tx1)), 'Accepted');
  assert.is(await again.vm.txStatus(idOf(tx2)), 'Rejected');
  assert.is(await balance(again.vm, ALICE.address), 1n);
  const tx3 = sendAva(3n, BOB.address, outputTo(tx1, EWOQ.address));
  await again.vm.issueTx(tx3);
  const [b2] = await settle(again.vm);
  assert.is(b2!.height, 2);
  assert.ok(b2!.parentId.equals(b!.id));
  assert.is(await balance(again.vm, BOB.address), 3n);
});

test('on LevelDB: what was accepted (UTXOs, the address index, statuses) is there after the store is reopened', async () => {
  const { LevelStore } = await import('@cornice/core');
  const dir = await mkdtemp(join(tmpdir(), 'avm-level-'));
  try {
    let root = await LevelStore.open(dir);
    const h = await startVM({ root });
    const tx1 = sendAva(1n, ALICE.address);
    const tx2 = sendAva(2n, BOB.address);
    await h.vm.issueTx(tx1);
    await h.vm.issueTx(tx2);
    const [b] = await settle(h.vm);
    await h.vm.shutdown();
    await root.close();
    root = await LevelStore.open(dir);
    const again = await startVM({ root, clock: h.clock });
    assert.ok((await again.vm.lastAccepted()).equals(b!.id));
    assert.is(await again.vm.txStatus(idOf(tx1)), 'Accepted');
    assert.is(await again.vm.txStatus(idOf(tx2)), 'Rejected');
    assert.is(await balance(again.vm, ALICE.address), 1n);
    assert.is(await balance(again.vm, EWOQ.address), GENESIS_AMOUNT - 1n);
    assert.is((await again.vm.utxos([EWOQ.address, ALICE.address], 2)).length, 2);
    await again.vm.shutdown();
    await root.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('mempool bounds: a full pool refuses with MempoolFull', async () => {
  const { vm } = await startVM({ opts: { mempoolCapacity: 1 } });
  await vm.issueTx(sendAva(1n, ALICE.address));
  await rejectsWith(vm.issueTx(baseTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [out(GOLD, 1n, [ALICE.address])])), 'MempoolFull');
});

test('calls before initialize are refused', async () => {
  const e = await rejectsWith(new AssetVM().lastAccepted(), 'NotRunning');
  assert.ok(hasErrorCode(e, 'NotRunning'));
});

test.run();
