import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toHex, utf8Encode } from '@cornice/sdk';
import { BOB, hex, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before.each(async () => {
  s = await serve();
});
test.after.each(async () => {
  await s.close();
});

const ok = (method: string, params: unknown[] = []): Promise<any> => s.ok(method, params);

// The well-known ewoq key's EVM account (its address is documented for the local C-Chain).
const KEY = '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
const KEY_ADDRESS = '0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc';

/** Every byte stored under the accounts prefix, as one lower-case hex string. */
async function storedHex(): Promise<string> {
  let all = '';
  for await (const [k, v] of s.store.iterate()) all += toHex(k) + toHex(v);
  return all;
}

test('importRawKey: the address; listed by personal_listAccounts and eth_accounts; stored encrypted', async () => {
  assert.is(await ok('personal_importRawKey', [KEY, 'pw']), KEY_ADDRESS);
  assert.equal(await ok('personal_listAccounts'), [KEY_ADDRESS]);
  assert.equal(await ok('eth_accounts'), [KEY_ADDRESS]);
  const stored = await storedHex();
  assert.ok(stored.length > 0);
  assert.not.ok(stored.includes(KEY), 'the key is not stored in clear');
  assert.equal((await s.call('personal_importRawKey', ['0x' + KEY, 'other'])).error, { code: -32000, message: 'account already exists' });
});

test('accounts survive a restart of the front end (same store), in creation order', async () => {
  const a = await ok('personal_newAccount', ['one']);
  const b = await ok('personal_newAccount', ['two']);
  assert.match(a, /^0x[0-9a-f]{40}$/);
  assert.is.not(a, b);
  s.rpc.close();
  const again = await serve({ accounts: s.store });
  try {
    const r = await again.call('personal_listAccounts');
    assert.equal(r.result, [a, b]);
    const u = await again.call('personal_unlockAccount', [b, 'two']);
    assert.is(u.result, true);
  } finally {
    await again.close();
  }
});

test('a wrong password fails to unlock, sign or send; nothing leaks in the log', async () => {
  await ok('personal_importRawKey', [KEY, 'right']);
  const wrong = { code: -32000, message: 'could not decrypt key with given password' };
  assert.equal((await s.call('personal_unlockAccount', [KEY_ADDRESS, 'wrong'])).error, wrong);
  assert.equal((await s.call('personal_sign', ['0x01', KEY_ADDRESS, 'wrong'])).error, wrong);
  assert.equal((await s.call('personal_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB) }, 'wrong'])).error, wrong);
  assert.equal((await s.call('personal_unlockAccount', [hex(BOB), 'x'])).error, { code: -32000, message: 'no key for given address or file' });
  const logged = JSON.stringify(s.log.lines);
  assert.not.ok(logged.includes(KEY));
  assert.not.ok(logged.includes('right'));
});

test('personal_sign: EIP-191 with v 27/28 (geth); personal_ecRecover returns the signer', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  const message = utf8Encode('hello cornice');
  const sig: string = await ok('personal_sign', [hex(message), KEY_ADDRESS, 'pw']);
  assert.match(sig, /^0x[0-9a-f]{130}$/);
  const v = parseInt(sig.slice(-2), 16);
  assert.ok(v === 27 || v === 28);
  // Independent check: noble verifies the signature over keccak("\x19Ethereum Signed Message:\n13hello cornice").
  const digest = keccak_256(utf8Encode('\x19Ethereum Signed Message:\n13hello cornice'));
  const pub = secp256k1.getPublicKey(Uint8Array.from(Buffer.from(KEY, 'hex')));
  assert.ok(secp256k1.verify(Uint8Array.from(Buffer.from(sig.slice(2, 130), 'hex')), digest, pub, { prehash: false }));
  assert.is(await ok('personal_ecRecover', [hex(message), sig]), KEY_ADDRESS);
  // Another message recovers another address.
  const other = await ok('personal_ecRecover', [hex(utf8Encode('hello cornicf')), sig]);
  assert.is.not(other, KEY_ADDRESS);
  assert.equal((await s.call('personal_ecRecover', ['0x01', sig.slice(0, -2) + '01'])).error, {
    code: -32000,
    message: 'invalid Ethereum signature (V is not 27 or 28)',
  });
  assert.equal((await s.call('personal_ecRecover', ['0x01', '0x1234'])).error, { code: -32000, message: 'signature must be 65 bytes long' });
});

test('personal_sendTransaction: the backend signs with the decrypted key', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  assert.is(await ok('personal_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB), value: '0x1' }, 'pw']), '0x' + '5e'.repeat(32));
  const { req, key } = s.backend.sent[0]!;
  assert.is(toHex(key), KEY);
  assert.is(req.value, 1n);
  assert.equal((await s.call('personal_sendTransaction', [{ to: hex(BOB) }, 'pw'])).error, {
    code: -32602,
    message: 'invalid argument 0: from: missing value (the sending account)',
  });
});

test('unlock: eth_sendTransaction and eth_sign use unlocked accounts until the duration passes (injected clock)', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  const send = () => s.call('eth_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB) }]);
  assert.equal((await send()).error, { code: -32000, message: 'authentication needed: password or unlock' });
  assert.equal((await s.call('eth_sendTransaction', [{ from: hex(BOB), to: hex(BOB) }])).error, { code: -32000, message: 'unknown account' });
  assert.is(await ok('personal_unlockAccount', [KEY_ADDRESS, 'pw', '0x3c']), true);
  assert.is((await send()).result, '0x' + '5e'.repeat(32));
  const signed = await ok('eth_sign', [KEY_ADDRESS, '0x68656c6c6f']);
  assert.is(signed, await ok('personal_sign', ['0x68656c6c6f', KEY_ADDRESS, 'pw']));
  s.clock.advance(60_000);
  assert.equal((await send()).error, { code: -32000, message: 'authentication needed: password or unlock' });
  // Seconds as a JSON number, as web3.js and geth's console send them.
  assert.is(await ok('personal_unlockAccount', [KEY_ADDRESS, 'pw', 30]), true);
  s.clock.advance(29_000);
  assert.is((await send()).result, '0x' + '5e'.repeat(32));
  s.clock.advance(1_000);
  assert.equal((await send()).error, { code: -32000, message: 'authentication needed: password or unlock' });
  assert.match((await s.call('personal_unlockAccount', [KEY_ADDRESS, 'pw', 1.5])).error!.message, /whole number of seconds/);
  // Default duration 300 s; lock ends it at once.
  await ok('personal_unlockAccount', [KEY_ADDRESS, 'pw']);
  s.clock.advance(299_000);
  assert.is((await send()).result, '0x' + '5e'.repeat(32));
  assert.is(await ok('personal_lockAccount', [KEY_ADDRESS]), true);
  assert.equal((await send()).error, { code: -32000, message: 'authentication needed: password or unlock' });
  assert.is(await ok('personal_lockAccount', [hex(BOB)]), false);
});

test('bad personal_ arguments: -32602 naming the argument', async () => {
  const cases: Array<[string, unknown[], string]> = [
    ['personal_newAccount', [], 'missing value for required argument 0'],
    ['personal_newAccount', [5], 'invalid argument 0: cannot unmarshal number into string'],
    ['personal_importRawKey', ['1234', 'pw'], 'invalid argument 0: private key must be 64 hex digits, got 4'],
    ['personal_importRawKey', ['zz'.repeat(32), 'pw'], 'invalid argument 0: invalid hex string'],
    ['personal_unlockAccount', [KEY_ADDRESS, 'pw', '0x0'], 'invalid argument 2: unlock duration must be between 1 and 86400 seconds'],
    ['personal_unlockAccount', [KEY_ADDRESS, 'pw', '0x15181'], 'invalid argument 2: unlock duration must be between 1 and 86400 seconds'],
    ['personal_sign', ['0x01', KEY_ADDRESS], 'missing value for required argument 2'],
    ['personal_ecRecover', ['0x01', '0x1'], 'invalid argument 1: hex string of odd length'],
    ['personal_newAccount', ['x'.repeat(5000)], 'invalid argument 0: string longer than 4096 characters'],
  ];
  for (const [method, params, message] of cases) {
    assert.equal((await s.call(method, params)).error, { code: -32602, message }, method);
  }
  const r = await s.call('personal_importRawKey', ['00'.repeat(32), 'pw']);
  assert.equal(r.error, { code: -32000, message: 'invalid private key' });
});

test('key derivations run one at a time with a bounded queue: a flood gets -32005, the front end keeps answering', async () => {
  await s.close();
  s = await serve({ limits: { accounts: { defaultSeconds: 300, maxSeconds: 86_400, maxWaiting: 2 } } });
  await ok('personal_importRawKey', [KEY, 'pw']);
  const flood = await Promise.all(Array.from({ length: 8 }, () => s.call('personal_unlockAccount', [KEY_ADDRESS, 'wrong'])));
  const codes = flood.map((r) => r.error?.code);
  assert.ok(codes.filter((c) => c === -32005).length >= 4, JSON.stringify(codes));
  assert.ok(codes.filter((c) => c === -32000).length >= 1, JSON.stringify(codes));
  assert.equal(flood.find((r) => r.error?.code === -32005)!.error, { code: -32005, message: 'too many account operations waiting: try again later' });
  assert.is(await ok('personal_unlockAccount', [KEY_ADDRESS, 'pw']), true);
});

test.run();
