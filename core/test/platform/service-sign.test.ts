import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, ShortId, cb58Decode, cb58Encode, compareBytes, recoverAddress } from '@cornice/sdk';
import { MAX_FX_IDS, MAX_GENESIS_BYTES } from '../../src/platform/api.js';
import { decodeTx, encodeTx, txId, unsignedTxBytes } from '../../src/platform/codec.js';
import { PlatformError } from '../../src/platform/errors.js';
import type { AddNonDefaultSubnetValidatorTx, CreateChainTx, IssuableTx, PlatformTx } from '../../src/platform/model.js';
import { FakeState, NOW, PASSWORD, addSubnet, harness, type Harness } from './fake-backend.js';
import { EWOQ_ADDRESS, EWOQ_KEY, id, sampleTxs, shortId } from './samples.js';

const decode = (tx: string): PlatformTx => decodeTx(cb58Decode(tx));
const signerOf = (tx: IssuableTx, sig: Uint8Array) => recoverAddress(unsignedTxBytes(tx), sig).toString();

interface Setup extends Harness {
  control: PrivateKey[];
  payer: string;
  sign(tx: string, signer: PrivateKey | string): Promise<string>;
}

/** User bob holds three control keys of a 2-of-3 subnet and the ewoq key (the payer). */
async function setup(): Promise<Setup> {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  const control = [PrivateKey.generate(), PrivateKey.generate(), PrivateKey.generate()];
  for (const k of control) await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: k.toCb58() });
  await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY });
  addSubnet(h.backend, control.map((k) => k.address), 2);
  const sign = async (tx: string, signer: PrivateKey | string) =>
    (await h.client.sign({ tx, signer: typeof signer === 'string' ? signer : signer.address.toString(), username: 'bob', password: PASSWORD })).tx;
  return { ...h, control, payer: EWOQ_ADDRESS, sign };
}

const addValidatorArgs = { subnetID: id('subnet').toString(), startTime: NOW + 60, endTime: NOW + 60 + 86_400 * 2, weight: 1, payerNonce: 1 };

function checkControlSigs(tx: AddNonDefaultSubnetValidatorTx | CreateChainTx, signers: PrivateKey[]) {
  assert.is(tx.controlSigs.length, signers.length);
  const sorted = [...tx.controlSigs].sort(compareBytes);
  assert.equal(tx.controlSigs, sorted, 'control signatures are sorted by raw bytes');
  assert.equal(tx.controlSigs.map((s) => signerOf(tx, s)).sort(), signers.map((k) => k.address.toString()).sort());
}

test('sign order: 2-of-3 control keys, then a third control key signs as payer, then no place for a fourth', async () => {
  const s = await setup();
  const [k1, k2, k3] = s.control as [PrivateKey, PrivateKey, PrivateKey];
  const t0 = (await s.client.addNonDefaultSubnetValidator(addValidatorArgs)).unsignedTx;
  const t1 = await s.sign(t0, k1);
  checkControlSigs(decode(t1) as AddNonDefaultSubnetValidatorTx, [k1]);
  const t2 = await s.sign(t1, k2);
  const tx2 = decode(t2) as AddNonDefaultSubnetValidatorTx;
  checkControlSigs(tx2, [k1, k2]);
  assert.ok(tx2.payerSig.every((b) => b === 0));
  const t3 = await s.sign(t2, k3);
  const tx3 = decode(t3) as AddNonDefaultSubnetValidatorTx;
  checkControlSigs(tx3, [k1, k2]);
  assert.is(signerOf(tx3, tx3.payerSig), k3.address.toString());
  const e = await s.fails('sign', { tx: t3, signer: s.payer, username: 'bob', password: PASSWORD }, -32000);
  assert.is(e.message, 'no place for key to sign');
  // The signed tx issues; its ID is the backend's.
  assert.equal(await s.client.issueTx({ tx: t3 }), { txID: txId(tx3).toString() });
  assert.is(s.backend.issued.length, 1);
});

test('sign order (as the reference node signs): a control key that already signed as control signs next as payer; a non-control key signs as payer', async () => {
  const s = await setup();
  const [k1, k2, k3] = s.control as [PrivateKey, PrivateKey, PrivateKey];
  const t0 = (await s.client.addNonDefaultSubnetValidator(addValidatorArgs)).unsignedTx;
  const twice = decode(await s.sign(await s.sign(t0, k1), k1)) as AddNonDefaultSubnetValidatorTx;
  checkControlSigs(twice, [k1]);
  assert.is(signerOf(twice, twice.payerSig), k1.address.toString());
  const full = decode(await s.sign(encodeAndWire(twice), k2)) as AddNonDefaultSubnetValidatorTx;
  checkControlSigs(full, [k1, k2]);

  // The payer first, then the control keys; a third control key finds no place.
  const p = await s.sign(t0, s.payer);
  const p2 = await s.sign(await s.sign(p, k3), k2);
  const tx = decode(p2) as AddNonDefaultSubnetValidatorTx;
  checkControlSigs(tx, [k3, k2]);
  assert.is(signerOf(tx, tx.payerSig), EWOQ_ADDRESS);
  assert.is((await s.fails('sign', { tx: p2, signer: k1.address.toString(), username: 'bob', password: PASSWORD }, -32000)).message, 'no place for key to sign');
});

const encodeAndWire = (tx: PlatformTx) => cb58Encode(encodeTx(tx));

test('sign createBlockchain at its largest: 25 control signatures and the payer still fit in the reply', async () => {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  const keys = Array.from({ length: 25 }, () => PrivateKey.generate());
  for (const k of [...keys, PrivateKey.fromString(EWOQ_KEY)]) await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: k.toCb58() });
  addSubnet(h.backend, keys.map((k) => k.address), 25);
  let tx = (
    await h.client.createBlockchain({
      subnetID: id('subnet').toString(),
      vmID: 'timestamp',
      name: '✓'.repeat(256),
      payerNonce: '18446744073709551615',
      genesisData: cb58Encode(new Uint8Array(MAX_GENESIS_BYTES).fill(0xff)),
      fxIDs: Array(MAX_FX_IDS).fill(id('fx').toString()),
    })
  ).unsignedTx;
  for (const k of [...keys.map((k) => k.address.toString()), EWOQ_ADDRESS]) {
    tx = (await h.client.sign({ tx, signer: k, username: 'bob', password: PASSWORD })).tx;
  }
  const signed = decode(tx) as CreateChainTx;
  checkControlSigs(signed, keys);
  assert.is(signerOf(signed, signed.payerSig), EWOQ_ADDRESS);
});

test('sign: single-signature txs fill sig (signing again replaces it)', async () => {
  const s = await setup();
  const [k1] = s.control as [PrivateKey];
  const built = [
    (await s.client.createSubnet({ controlKeys: [k1.address.toString()], threshold: 1, payerNonce: 1 })).unsignedTx,
    (await s.client.exportNATIVE({ to: shortId('x').toString(), amount: 5, payerNonce: 1 })).unsignedTx,
    (
      await s.client.addDefaultSubnetValidator({
        startTime: NOW + 60,
        endTime: NOW + 86_400 * 30,
        stakeAmount: 20_000,
        payerNonce: 1,
        destination: EWOQ_ADDRESS,
      })
    ).unsignedTx,
    (await s.client.addDefaultSubnetDelegator({ startTime: NOW + 60, endTime: NOW + 86_400 * 30, stakeAmount: 20_000, payerNonce: 1, destination: EWOQ_ADDRESS }))
      .unsignedTx,
  ];
  for (const unsigned of built) {
    const signed = decode(await s.sign(unsigned, s.payer)) as IssuableTx & { sig: Uint8Array };
    assert.is(signerOf(signed, signed.sig), EWOQ_ADDRESS, signed.kind);
    const again = decode(await s.sign(encodeAndWire(signed), k1)) as IssuableTx & { sig: Uint8Array };
    assert.is(signerOf(again, again.sig), k1.address.toString(), signed.kind);
  }
});

test('sign: the subnet may be only in the preferred state; an unknown subnet is a clear error', async () => {
  const s = await setup();
  const [k1] = s.control as [PrivateKey];
  const t0 = (await s.client.addNonDefaultSubnetValidator({ ...addValidatorArgs, subnetID: id('new subnet').toString() })).unsignedTx;
  const e = await s.fails('sign', { tx: t0, signer: k1.address.toString(), username: 'bob', password: PASSWORD }, -32000);
  assert.is(e.message, `problem getting subnet information: couldn't find subnet with ID ${id('new subnet')}`);
  const preferred = new FakeState();
  preferred.subnetList.push({ id: id('new subnet'), controlKeys: [k1.address], threshold: 1 });
  s.backend.preferredState = preferred;
  const tx = decode(await s.sign(t0, k1)) as AddNonDefaultSubnetValidatorTx;
  checkControlSigs(tx, [k1]);
});

test('sign: refusals (key not held, nil signer, wrong password, malformed tx, txs sign does not take)', async () => {
  const s = await setup();
  const t0 = (await s.client.createSubnet({ controlKeys: [EWOQ_ADDRESS], threshold: 1, payerNonce: 1 })).unsignedTx;
  const args = { tx: t0, signer: s.payer, username: 'bob', password: PASSWORD };
  const e = (params: object, code: number) => s.fails('sign', { ...args, ...params }, code).then((x) => x.message);
  const stranger = shortId('stranger').toString();
  assert.is(await e({ signer: stranger }, -32000), `the user holds no P-Chain key for signer ${stranger}`);
  assert.is(await e({ signer: ShortId.empty.toString() }, -32602), "signer: nil ShortID 'signer' is not valid");
  assert.is(await e({ password: 'Wrong-password-1' }, -32000), 'incorrect password for user "bob"');
  assert.is(await e({ username: 'nobody' }, -32000), "couldn't get data for user 'nobody'. Does user exist?");
  assert.match(await e({ tx: cb58Encode(new Uint8Array([0, 0, 0, 99])) }, -32000), /unknown type ID 99/);
  assert.match(await e({ tx: cb58Encode(new Uint8Array([0, 0])) }, -32000), /./);
  assert.match(await e({ tx: 'not cb58' }, -32602), /^tx: /);
  assert.match(await e({ tx: 'z'.repeat(30_000) }, -32602), /^tx: must be at most/);
  assert.match(await e({ signer: undefined }, -32602), /^signer: missing required field/);
  const byKind = (k: string) => sampleTxs().find((t) => t.kind === k)!;
  assert.is(await e({ tx: encodeAndWire(byKind('import')) }, -32000), 'an import tx is built and signed by importNATIVE; sign does not take it');
  assert.is(await e({ tx: encodeAndWire(byKind('advanceTime')) }, -32000), 'advanceTime txs are made by the VM and take no signature');
});

test('issueTx: decodes and hands the tx to the VM; refusals are -32000 with the rule broken', async () => {
  const s = await setup();
  const signed = await s.sign((await s.client.createSubnet({ controlKeys: [EWOQ_ADDRESS], threshold: 1, payerNonce: 1 })).unsignedTx, s.payer);
  const tx = decode(signed);
  assert.equal(await s.client.issueTx({ tx: signed }), { txID: txId(tx).toString() });
  assert.is(s.backend.issued[0]!.kind, 'createSubnet');

  s.backend.issueError = new PlatformError('InvalidTx', "account's last nonce is 0 so expected tx nonce to be 1 but was 5");
  assert.is((await s.fails('issueTx', { tx: signed }, -32000)).message, "account's last nonce is 0 so expected tx nonce to be 1 but was 5");
  s.backend.issueError = undefined;

  for (const kind of ['advanceTime', 'rewardValidator']) {
    const e = await s.fails('issueTx', { tx: encodeAndWire(sampleTxs().find((t) => t.kind === kind)!) }, -32000);
    assert.is(e.message, 'Could not parse given tx. Must be a TimedTx, DecisionTx, or AtomicTx');
  }
  const trailing = cb58Encode(new Uint8Array([...cb58Decode(signed), 0]));
  assert.match((await s.fails('issueTx', { tx: trailing }, -32000)).message, /leftover/);
  assert.match((await s.fails('issueTx', {}, -32602)).message, /^tx: missing required field/);
  assert.is(s.backend.issued.length, 1);
});

test.run();
