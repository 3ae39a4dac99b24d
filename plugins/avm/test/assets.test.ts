import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, type ShortId } from '@cornice/sdk';
import { signTx, sortAddresses, type MintOutput, type Tx } from '../src/index.js';
import { CHAIN_ID, EWOQ, GOLD, GOLD_UTXO, NETWORK_ID, balance, baseTx, createAssetTx, idOf, out, rejectsWith, settle, startVM, transfer, utxoOf } from './vm-helpers.js';

const A = PrivateKey.fromBytes(new Uint8Array(32).fill(0x31));
const B = PrivateKey.fromBytes(new Uint8Array(32).fill(0x32));
const C = PrivateKey.fromBytes(new Uint8Array(32).fill(0x33));
const TO = PrivateKey.fromBytes(new Uint8Array(32).fill(0x34)).address;

const minters = (threshold: number, keys: PrivateKey[]): MintOutput => ({ kind: 'mint', threshold, addresses: sortAddresses(keys.map((k) => k.address)) });
/** The keys in the order of their addresses (the order of a MintOutput's owners). */
const byAddress = (keys: PrivateKey[]) => [...keys].sort((x, y) => x.address.compare(y.address));

/** A mint of `amount` to `to` from the MintOutput at `from`, signed by `signers` at `sigIndices`. */
function mintTx(assetId: ReturnType<typeof idOf>, from: ReturnType<typeof utxoOf>, o: { amount: bigint; to: ShortId; next: MintOutput; signers: PrivateKey[]; sigIndices: number[] }): Tx {
  return signTx(
    {
      kind: 'operation',
      networkId: NETWORK_ID,
      chainId: CHAIN_ID,
      outs: [],
      ins: [],
      ops: [{ assetId, utxos: [{ txId: from.txId, outputIndex: from.outputIndex }], op: { kind: 'mint', sigIndices: o.sigIndices, mintOutput: o.next, transferOutput: transfer(o.amount, [o.to]) } }],
    },
    [o.signers],
  );
}

test('createAsset (fixed cap): the asset and its holders exist once accepted', async () => {
  const { vm } = await startVM();
  const tx = createAssetTx('Fixed Coin', 'FIX', [transfer(500n, [A.address]), transfer(300n, [B.address])], 2);
  const id = await vm.issueTx(tx);
  assert.is(await vm.asset(id.toString()), undefined, 'not before it is accepted');
  await settle(vm);
  assert.equal(await vm.asset(id.toString()), { assetId: id, name: 'Fixed Coin', symbol: 'FIX', denomination: 2 });
  assert.is(await balance(vm, A.address, id), 500n);
  assert.is(await balance(vm, B.address, id), 300n);
});

test('createAsset (variable cap) then a 2-of-3 mint: minted, and the mint right carried on', async () => {
  const { vm } = await startVM();
  const create = createAssetTx('Variable Coin', 'VAR', [minters(2, [A, B, C])]);
  const assetId = await vm.issueTx(create);
  await settle(vm);
  const [k0, k1, k2] = byAddress([A, B, C]);
  const first = mintTx(assetId, utxoOf(create, 0), { amount: 1000n, to: TO, next: minters(2, [A, B, C]), signers: [k0!, k2!], sigIndices: [0, 2] });
  await vm.issueTx(first);
  await settle(vm);
  assert.is(await vm.txStatus(idOf(first)), 'Accepted');
  assert.is(await balance(vm, TO, assetId), 1000n);
  // The new MintOutput (output 0 of the mint) mints again.
  const second = mintTx(assetId, utxoOf(first, 0), { amount: 5n, to: TO, next: minters(2, [A, B, C]), signers: [k0!, k1!], sigIndices: [0, 1] });
  await vm.issueTx(second);
  await settle(vm);
  assert.is(await balance(vm, TO, assetId), 1005n);
  // The spent mint right is gone.
  await rejectsWith(vm.issueTx(mintTx(assetId, utxoOf(create, 0), { amount: 1n, to: TO, next: minters(2, [A, B, C]), signers: [k0!, k1!], sigIndices: [0, 1] })), 'InvalidTx', /missing utxo/);
});

test('mint errors: too few minters, another mint output, a wrong signer, a transfer output, an input spending a mint output', async () => {
  const { vm } = await startVM();
  const create = createAssetTx('Variable Coin', 'VAR', [minters(2, [A, B, C]), transfer(10n, [A.address])]);
  const assetId = await vm.issueTx(create);
  await settle(vm);
  const right = utxoOf(create, 0).out.kind === 'mint' ? utxoOf(create, 0) : utxoOf(create, 1);
  const coins = right.outputIndex === 0 ? utxoOf(create, 1) : utxoOf(create, 0);
  const [k0, k1] = byAddress([A, B, C]);
  const base = { amount: 1n, to: TO, next: minters(2, [A, B, C]) };
  await rejectsWith(vm.issueTx(mintTx(assetId, right, { ...base, signers: [k0!], sigIndices: [0] })), 'InvalidTx', /input has less signers than expected/);
  await rejectsWith(vm.issueTx(mintTx(assetId, right, { ...base, next: minters(1, [A]), signers: [k0!, k1!], sigIndices: [0, 1] })), 'InvalidTx', /wrong mint output created from the operation/);
  await rejectsWith(vm.issueTx(mintTx(assetId, right, { ...base, signers: [k1!, k0!], sigIndices: [0, 1] })), 'InvalidTx', /credential does not produce expected signer/);
  await rejectsWith(vm.issueTx(mintTx(assetId, coins, { ...base, signers: [A], sigIndices: [0] })), 'InvalidTx', /wrong utxo type/);
  await rejectsWith(vm.issueTx(mintTx(GOLD, right, { ...base, signers: [k0!, k1!], sigIndices: [0, 1] })), 'InvalidTx', /asset IDs in the input don't match the utxo/);
  const spendRight = baseTx([{ utxo: { ...right, out: transfer(1n, [A.address]) }, keys: [A] }], [out(assetId, 1n, [TO])]);
  await rejectsWith(vm.issueTx(spendRight), 'InvalidTx', /wrong utxo type/);
  assert.is((await settle(vm)).length, 0);
});

test('a CreateAssetTx with inputs pays like any tx: its own outputs come from its inputs', async () => {
  const { vm } = await startVM();
  const tx: Tx = signTx(
    {
      kind: 'createAsset',
      networkId: NETWORK_ID,
      chainId: CHAIN_ID,
      outs: [out(GOLD, 1000n, [A.address])],
      ins: [{ txId: GOLD_UTXO.txId, outputIndex: 0, assetId: GOLD, input: { amount: 1000n, sigIndices: [0] } }],
      name: 'Paid',
      symbol: 'PD',
      denomination: 0,
      states: [{ fxIndex: 0, outs: [transfer(7n, [B.address])] }],
    },
    [[EWOQ]],
  );
  const id = await vm.issueTx(tx);
  await settle(vm);
  assert.is(await balance(vm, A.address, GOLD), 1000n);
  assert.is(await balance(vm, B.address, id), 7n);
});

test.run();
