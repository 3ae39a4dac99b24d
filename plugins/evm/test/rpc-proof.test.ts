/**
 * eth_getProof's front end over the fake backend: the reply's fields and formats, geth's key echo,
 * the block parameter as eth_getBalance's, invalid input (-32602 naming the argument), the bound on
 * storage keys, and the walks run in the scan lane with the request's signal.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '@cornice/sdk';
import type { AccountProofView, Address, BlockRef, Hash, StopSignal } from '../src/index.js';
import { MAX_PROOF_KEYS, parseProofKey } from '../src/rpc/proof.js';
import { ALICE, FakeBackend, filled, hex, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before.each(async () => {
  s = await serve();
});
test.after.each(async () => {
  await s.close();
});

const A = hex(ALICE);
const HASH32 = /^0x[0-9a-f]{64}$/;
const QUANTITY = /^0x(0|[1-9a-f][0-9a-f]*)$/;
const BYTES = /^0x([0-9a-f]{2})*$/;

test('eth_getProof: the AccountProof fields in the schema\'s order and formats', async () => {
  s.backend.balances.set(toHex(ALICE), 10n ** 18n);
  const slot = '0x' + '00'.repeat(31) + '07';
  const r = await s.ok('eth_getProof', [A.toUpperCase().replace('0X', '0x'), [slot], 'latest']);
  assert.equal(Object.keys(r), ['address', 'accountProof', 'balance', 'codeHash', 'nonce', 'storageHash', 'storageProof']);
  assert.is(r.address, A, 'lower case');
  assert.equal(r.accountProof, [hex(filled(0xf1, 40)), hex(filled(0xf2, 40))]);
  assert.is(r.balance, '0xde0b6b3a7640000');
  assert.is(r.nonce, '0x5');
  assert.is(r.codeHash, hex(filled(0xc0)));
  assert.is(r.storageHash, hex(filled(0x5a)));
  assert.equal(r.storageProof, [{ key: slot, value: '0x7', proof: [hex(filled(7, 33))] }]);
  for (const q of [r.balance, r.nonce, r.storageProof[0].value]) assert.match(q, QUANTITY);
  for (const h of [r.codeHash, r.storageHash]) assert.match(h, HASH32);
  for (const n of [...r.accountProof, ...r.storageProof[0].proof]) assert.match(n, BYTES);
  assert.equal((await s.ok('eth_getProof', [A, [], 'latest'])).storageProof, []);
});

test('eth_getProof echoes keys as geth: a 32-byte key as 32-byte hex, a shorter one as a quantity', async () => {
  const full = '0x' + 'AB'.repeat(32);
  const r = await s.ok('eth_getProof', [A, [full, '0x01', '0x0', '0x', '0x00ff', 'a', '0X10', '0x' + '00'.repeat(32)], 'latest']);
  assert.equal(
    r.storageProof.map((p: { key: string }) => p.key),
    ['0x' + 'ab'.repeat(32), '0x1', '0x0', '0x0', '0xff', '0xa', '0x10', '0x' + '00'.repeat(32)],
  );
  // The slots reach the backend left-padded to 32 bytes.
  const slots = s.backend.calls.find((c) => c.method === 'proof')!.args[1] as Uint8Array[];
  assert.equal(slots.map(hex), [full.toLowerCase(), hex(filled(0, 31)) + '01', hex(filled(0, 32)), hex(filled(0, 32)), hex(filled(0, 31)) + 'ff', hex(filled(0, 31)) + '0a', hex(filled(0, 31)) + '10', hex(filled(0, 32))]);
  assert.equal(parseProofKey('0x1').echo, '0x1');
});

test('eth_getProof takes the block as eth_getBalance does, with its errors', async () => {
  const genesis = hex(s.backend.blocks[0]!.block.header.hash);
  for (const block of ['latest', 'pending', 'earliest', 'safe', 'finalized', 'accepted', '0x0', genesis, { blockHash: genesis }, { blockHash: genesis, requireCanonical: true }, { blockNumber: '0x0' }]) {
    assert.is((await s.ok('eth_getProof', [A, [], block])).address, A, JSON.stringify(block));
  }
  for (const [block, message] of [
    ['0x9', 'header not found'],
    ['0x' + '99'.repeat(32), 'header for hash not found'],
    [{ blockHash: '0x' + '99'.repeat(32) }, 'header for hash not found'],
  ] as const) {
    assert.equal((await s.call('eth_getProof', [A, [], block])).error, (await s.call('eth_getBalance', [A, block])).error);
    assert.equal((await s.call('eth_getProof', [A, [], block])).error, { code: -32000, message });
  }
});

test('eth_getProof: invalid input is -32602 naming the argument', async () => {
  const cases: Array<[unknown, string]> = [
    [[], 'missing value for required argument 0'],
    [[A], 'missing value for required argument 1'],
    [[A, []], 'missing value for required argument 2'],
    [[A, [], 'latest', 1], 'too many arguments, want at most 3'],
    [['0x1234', [], 'latest'], 'invalid argument 0: hex string has length 4, want 40 for address'],
    [['nothex', [], 'latest'], 'invalid argument 0: hex string without 0x prefix'],
    [[7, [], 'latest'], 'invalid argument 0: cannot unmarshal number into address'],
    [[A, '0x01', 'latest'], 'invalid argument 1: cannot unmarshal string into storage key list'],
    [[A, { 0: '0x01' }, 'latest'], 'invalid argument 1: cannot unmarshal object into storage key list'],
    [[A, [1], 'latest'], 'invalid argument 1: storage key 0: cannot unmarshal number into storage key'],
    [[A, ['0x01', null], 'latest'], 'invalid argument 1: storage key 1: cannot unmarshal null into storage key'],
    [[A, [['0x01']], 'latest'], 'invalid argument 1: storage key 0: cannot unmarshal array into storage key'],
    [[A, ['0xzz'], 'latest'], 'invalid argument 1: storage key 0: hex string invalid'],
    [[A, ['0x' + '11'.repeat(33)], 'latest'], 'invalid argument 1: storage key 0: hex string too long, want at most 32 bytes'],
    [[A, ['0x1' + '00'.repeat(32)], 'latest'], 'invalid argument 1: storage key 0: hex string too long, want at most 32 bytes'],
    [[A, ['0x' + 'f'.repeat(100_000)], 'latest'], 'invalid argument 1: storage key 0: hex string too long, want at most 32 bytes'],
    [[A, Array(MAX_PROOF_KEYS + 1).fill('0x01'), 'latest'], `invalid argument 1: too many storage keys (${MAX_PROOF_KEYS + 1}): at most 1024 per request`],
    [[A, [], 'newest'], 'invalid argument 2: hex string without 0x prefix'],
    [[A, [], '0x1' + '0'.repeat(16)], 'invalid argument 2: hex number > 64 bits'],
    [[A, [], { blockHash: '0x12' }], 'invalid argument 2: blockHash: hex string has length 2, want 64 for hash'],
    [[A, [], {}], 'invalid argument 2: block object needs blockHash or blockNumber'],
  ];
  for (const [params, message] of cases) {
    const r = await s.call('eth_getProof', params);
    assert.equal(r.error, { code: -32602, message }, JSON.stringify(params).slice(0, 80));
  }
  assert.not.ok(s.backend.calls.some((c) => c.method === 'proof'), 'nothing invalid reaches the chain');
  // The bound itself is served.
  assert.is((await s.ok('eth_getProof', [A, Array(MAX_PROOF_KEYS).fill('0x01'), 'latest'])).storageProof.length, MAX_PROOF_KEYS);
});

/** A backend whose proofs wait until released, recording the signal each got. */
class HeldProofs extends FakeBackend {
  readonly held: Array<{ signal: StopSignal | undefined; release: () => void }> = [];
  override async proof(address: Address, slots: readonly Hash[], ref: BlockRef, signal?: StopSignal): Promise<AccountProofView> {
    await new Promise<void>((release) => this.held.push({ signal, release }));
    return super.proof(address, slots, ref, signal);
  }
}

test('eth_getProof runs in the scan lane with the request\'s signal', async () => {
  await s.close();
  const backend = new HeldProofs();
  s = await serve({}, backend);
  const pending = s.call('eth_getProof', [A, ['0x01'], 'latest']);
  while (backend.held.length === 0) await new Promise((r) => setImmediate(r));
  assert.is(s.rpc.lanes.scan.running, 1, 'in the scan lane');
  assert.is(s.rpc.lanes.call.running, 0);
  const { signal } = backend.held[0]!;
  assert.ok(signal && !signal.aborted, 'the request\'s signal reaches the chain');
  backend.held[0]!.release();
  assert.is((await pending).result.storageProof[0].value, '0x1');
  assert.is(s.rpc.lanes.scan.running, 0);
});

test.run();
