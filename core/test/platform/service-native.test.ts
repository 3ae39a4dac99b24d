import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ShortId, cb58Decode, recoverAddress, type Id } from '@cornice/sdk';
import { nativeMethodAliases as nativeAliases } from '@cornice/sdk';
import { platformApi, platformApiWithSymbol } from '../../src/platform/api.js';
import { decodeTx, encodeUtxo, unsignedTxBytes, utxoId } from '../../src/platform/codec.js';
import { EMPTY_SIGNATURE, type ExportTx, type ImportTx, type TransferOutput } from '../../src/platform/model.js';
import { MAX_IMPORT_INPUTS } from '../../src/platform/service.js';
import { NOW, PASSWORD, harness, type FakeBackend } from './fake-backend.js';
import { EWOQ_ADDRESS, EWOQ_KEY, id, plain, shortId } from './samples.js';

const EWOQ = ShortId.fromString(EWOQ_ADDRESS);

function utxo(b: FakeBackend, label: string, index: number, out: Partial<Omit<TransferOutput, 'kind'>> & { assetId?: Id }): void {
  const txId = id(label);
  const { assetId = b.peer!.assetId, ...fields } = out;
  const full: TransferOutput = { kind: 'transfer', amount: 1_000n, locktime: 0n, threshold: 1, addresses: [EWOQ], ...fields };
  b.utxos.push([utxoId(txId, index).bytes, encodeUtxo({ txId, outputIndex: index, assetId, out: full })]);
}

test('the declaration: every method of API.md; the native-token methods also under the symbol', () => {
  assert.is(platformApi.name, 'platform');
  assert.equal(Object.keys(platformApi.methods).sort(), [
    'addDefaultSubnetDelegator',
    'addDefaultSubnetValidator',
    'addNonDefaultSubnetValidator',
    'createAccount',
    'createBlockchain',
    'createSubnet',
    'exportNATIVE',
    'getAccount',
    'getBlockchainStatus',
    'getBlockchains',
    'getCurrentValidators',
    'getPendingValidators',
    'getSubnets',
    'importNATIVE',
    'issueTx',
    'listAccounts',
    'sampleValidators',
    'sign',
    'validatedBy',
    'validates',
  ]);
  const withAva = platformApiWithSymbol('AVA');
  assert.is(withAva.methods.exportAVA, platformApi.methods.exportNATIVE);
  assert.is(withAva.methods.importAVA, platformApi.methods.importNATIVE);
  assert.equal(nativeAliases('NATIVE'), []);
  assert.equal(nativeAliases(''), []);
  assert.equal(nativeAliases('A.B'), []);
  assert.equal(Object.keys(platformApiWithSymbol('NATIVE').methods).length, Object.keys(platformApi.methods).length);
});

test('exportNATIVE and exportAVA: an unsigned ExportTx of one native-token output to the bare X address', async () => {
  const h = harness();
  const to = shortId('x address');
  const reply = await h.client.exportNATIVE({ to: to.toString(), amount: '5000', payerNonce: 2 });
  const tx = decodeTx(cb58Decode(reply.unsignedTx)) as ExportTx;
  assert.equal(plain(tx), plain({
    kind: 'export',
    networkId: 12345,
    nonce: 2n,
    outs: [{ assetId: h.backend.peer!.assetId, out: { kind: 'transfer', amount: 5_000n, locktime: 0n, threshold: 1, addresses: [to] } }],
    sig: EMPTY_SIGNATURE,
  }));
  assert.equal((await h.call('exportAVA', { to: to.toString(), amount: 5000, payerNonce: '2' })).result, reply);
  // Another symbol, another alias; NATIVE always answers.
  const other = harness({ nativeSymbol: 'CRN' });
  assert.equal((await other.call('exportCRN', { to: to.toString(), amount: 5000, payerNonce: 2 })).result, reply);
  assert.is((await other.call('exportAVA', { to: to.toString(), amount: 5000, payerNonce: 2 })).error!.code, -32601);
});

test('exportNATIVE: refusals', async () => {
  const h = harness();
  const args = { to: shortId('x').toString(), amount: 1, payerNonce: 1 };
  for (const m of ['exportNATIVE', 'exportAVA']) {
    assert.is((await h.fails(m, { ...args, amount: 0 }, -32602)).message, 'amount: amount must be >0');
    assert.is((await h.fails(m, { ...args, payerNonce: 0 }, -32602)).message, "payerNonce: sender's next nonce not specified");
    assert.match((await h.fails(m, { ...args, to: `X-${args.to}` }, -32602)).message, /^to: /);
    assert.match((await h.fails(m, { ...args, amount: 'lots' }, -32602)).message, /^amount: /);
  }
  h.backend.peer = undefined;
  assert.is((await h.fails('exportNATIVE', args, -32000)).message, 'this node runs no X-Chain to move native tokens to or from');
});

test("importNATIVE and importAVA: sweep the native UTXOs `to` alone can spend, sorted by (txID, index), signed by to's key", async () => {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY });
  const b = h.backend;
  utxo(b, 'tx b', 1, { amount: 300n });
  utxo(b, 'tx a', 4, { amount: 100n });
  utxo(b, 'tx a', 2, { amount: 200n, addresses: [shortId('someone'), EWOQ].sort((x, y) => x.compare(y)) });
  utxo(b, 'other asset', 0, { assetId: id('another asset') });
  utxo(b, 'not ours', 0, { addresses: [shortId('someone')] });
  utxo(b, 'two sigs', 0, { threshold: 2, addresses: [shortId('someone'), EWOQ].sort((x, y) => x.compare(y)) });
  utxo(b, 'locked', 0, { locktime: BigInt(NOW + 1) });
  b.utxos.push([new Uint8Array(32), new Uint8Array([1, 2, 3])]); // not a UTXO: skipped

  const reply = await h.client.importNATIVE({ username: 'bob', password: PASSWORD, to: EWOQ_ADDRESS, payerNonce: 1 });
  const tx = decodeTx(cb58Decode(reply.tx)) as ImportTx;
  const input = (label: string, index: number, amount: bigint, sigIndex: number) => ({ txId: id(label), outputIndex: index, assetId: b.peer!.assetId, input: { amount, sigIndices: [sigIndex] } });
  const expectedIns = [input('tx a', 2, 200n, [shortId('someone'), EWOQ].sort((x, y) => x.compare(y)).findIndex((a) => a.equals(EWOQ))), input('tx a', 4, 100n, 0), input('tx b', 1, 300n, 0)].sort(
    (x, y) => x.txId.compare(y.txId) || x.outputIndex - y.outputIndex,
  );
  assert.equal(plain({ ...tx, sig: undefined, creds: undefined }), plain({ kind: 'import', networkId: 12345, nonce: 1n, account: EWOQ, ins: expectedIns, sig: undefined, creds: undefined }));
  const msg = unsignedTxBytes(tx);
  assert.is(recoverAddress(msg, tx.sig).toString(), EWOQ_ADDRESS);
  assert.is(tx.creds.length, 3);
  for (const c of tx.creds) {
    assert.is(c.sigs.length, 1);
    assert.is(recoverAddress(msg, c.sigs[0]!).toString(), EWOQ_ADDRESS);
  }
  assert.equal((await h.call('importAVA', { username: 'bob', password: PASSWORD, to: EWOQ_ADDRESS, payerNonce: 1 })).result, reply);
  // The signed tx issues as it is.
  assert.ok((await h.client.issueTx({ tx: reply.tx })).txID);
  assert.is(h.backend.issued[0]!.kind, 'import');
});

test('importNATIVE: at most MAX_IMPORT_INPUTS inputs, the first by (txID, index)', async () => {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY });
  const ids: Id[] = [];
  for (let i = 0; i < 5 * MAX_IMPORT_INPUTS + 5; i++) {
    utxo(h.backend, `u${i}`, 0, { amount: 1n });
    ids.push(id(`u${i}`));
  }
  const tx = decodeTx(cb58Decode((await h.client.importNATIVE({ username: 'bob', password: PASSWORD, to: EWOQ_ADDRESS, payerNonce: 1 })).tx)) as ImportTx;
  const first = ids.sort((a, b) => a.compare(b)).slice(0, MAX_IMPORT_INPUTS);
  assert.equal(tx.ins.map((i) => i.txId.toString()), first.map(String));
});

test('importNATIVE: the inputs sum within a u64', async () => {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY });
  utxo(h.backend, 'big 1', 0, { amount: (1n << 64n) - 1n });
  utxo(h.backend, 'big 2', 0, { amount: (1n << 64n) - 1n });
  const tx = decodeTx(cb58Decode((await h.client.importNATIVE({ username: 'bob', password: PASSWORD, to: EWOQ_ADDRESS, payerNonce: 1 })).tx)) as ImportTx;
  assert.is(tx.ins.length, 1);
  assert.is(tx.ins[0]!.input.amount, (1n << 64n) - 1n);
});

test('importNATIVE: refusals (to not held, no funds, no X-Chain, nil to, bad inputs)', async () => {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  const args = { username: 'bob', password: PASSWORD, to: EWOQ_ADDRESS, payerNonce: 1 };
  const e = (params: object, code: number) => h.fails('importNATIVE', { ...args, ...params }, code).then((x) => x.message);
  assert.is(await e({}, -32000), `the user holds no P-Chain key for to ${EWOQ_ADDRESS}`);
  await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY });
  assert.is(await e({}, -32000), 'no spendable funds were found');
  utxo(h.backend, 'not ours', 0, { addresses: [shortId('someone')] });
  assert.is(await e({}, -32000), 'no spendable funds were found');
  assert.is(await e({ payerNonce: 0 }, -32602), "payerNonce: sender's next nonce not specified");
  assert.is(await e({ to: ShortId.empty.toString() }, -32602), "to: nil ShortID 'to' is not valid");
  assert.is(await e({ password: 'Wrong-password-1' }, -32000), 'incorrect password for user "bob"');
  assert.match(await e({ to: undefined }, -32602), /^to: missing required field/);
  h.backend.peer = undefined;
  assert.is(await e({}, -32000), 'this node runs no X-Chain to move native tokens to or from');
});

test.run();
