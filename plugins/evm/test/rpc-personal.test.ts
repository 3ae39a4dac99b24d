import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toHex, utf8Encode } from '@cornice/sdk';
import { createServer } from 'node:http';
import { testChainContext } from '@cornice/core/testing';
import { parseChainConfig } from '../src/chain-config.js';
import { EvmVM } from '../src/chain-entry.js';
import { GENESIS, startVM } from './helpers.js';
import { BOB, FakeConnection, hex, serve, type Served } from './rpc-fake-backend.js';

/** personal_ on, HTTP unlocks allowed: the operator's choice these tests run under unless they say otherwise. */
const ON = { enabled: true, allowInsecureUnlock: true };

let s: Served;
test.before.each(async () => {
  s = await serve({ personal: ON });
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
  const again = await serve({ accounts: s.store, personal: ON });
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
  s = await serve({ personal: ON, limits: { accounts: { defaultSeconds: 300, maxSeconds: 86_400, maxWaiting: 2, freeFailures: 100 } } });
  await ok('personal_importRawKey', [KEY, 'pw']);
  const flood = await Promise.all(Array.from({ length: 8 }, () => s.call('personal_unlockAccount', [KEY_ADDRESS, 'wrong'])));
  const codes = flood.map((r) => r.error?.code);
  assert.ok(codes.filter((c) => c === -32005).length >= 4, JSON.stringify(codes));
  assert.ok(codes.filter((c) => c === -32000).length >= 1, JSON.stringify(codes));
  assert.equal(flood.find((r) => r.error?.code === -32005)!.error, { code: -32005, message: 'too many account operations waiting: try again later' });
  assert.is(await ok('personal_unlockAccount', [KEY_ADDRESS, 'pw']), true);
});

const PERSONAL = [
  'personal_listAccounts', 'personal_newAccount', 'personal_importRawKey', 'personal_unlockAccount', 'personal_lockAccount',
  'personal_sendTransaction', 'personal_sign', 'personal_ecRecover', 'eth_sendTransaction', 'eth_sign',
];

test('off by default (issue 32, point 9): every personal_ method, eth_sendTransaction and eth_sign answer -32601 naming the chain config key; eth_accounts lists none; nothing is stored', async () => {
  const off = await serve();
  try {
    for (const method of PERSONAL) {
      for (const params of [[], [KEY, 'pw'], [{ from: KEY_ADDRESS, to: hex(BOB) }], ['junk', 5, null]]) {
        const r = await off.call(method, params);
        assert.equal(r.error, {
          code: -32601,
          message: `the method ${method} does not exist/is not available: node-held accounts are off on this chain (chain config key "eth-apis" must list "internal-personal")`,
        }, method);
      }
    }
    assert.equal((await off.call('eth_accounts')).result, []);
    let stored = 0;
    for await (const _ of off.store.iterate()) stored++;
    assert.is(stored, 0);
    // The same over a WebSocket.
    const c = new FakeConnection();
    off.rpc.websocket(c);
    c.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'personal_unlockAccount', params: [KEY_ADDRESS, 'pw'] }));
    await new Promise((r) => setImmediate(r));
    assert.is(c.messages[0].error.code, -32601);
  } finally {
    await off.close();
  }
});

test('empty passwords are refused (-32602) wherever a password is taken', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  const cases: Array<[string, unknown[], number]> = [
    ['personal_newAccount', [''], 0],
    ['personal_importRawKey', [KEY, ''], 1],
    ['personal_unlockAccount', [KEY_ADDRESS, ''], 1],
    ['personal_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB) }, ''], 1],
    ['personal_sign', ['0x01', KEY_ADDRESS, ''], 2],
  ];
  for (const [method, params, i] of cases) {
    assert.equal((await s.call(method, params)).error, { code: -32602, message: `invalid argument ${i}: password must not be empty` }, method);
  }
});

/** One WebSocket connection to the front end and a way to call over it. */
function connect(served: Served): { c: FakeConnection; call(method: string, params?: unknown[]): Promise<any> } {
  const c = new FakeConnection();
  served.rpc.websocket(c);
  let id = 1000;
  return {
    c,
    async call(method, params = []) {
      const mine = id++;
      c.receive(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }));
      for (let i = 0; i < 500; i++) {
        const reply = c.messages.find((m) => m.id === mine);
        if (reply) return reply;
        await new Promise((r) => setTimeout(r, 2));
      }
      throw new Error(`no reply to ${method}`);
    },
  };
}

test('on, without keystore-insecure-unlock-allowed: an unlock over HTTP is refused (geth\'s text); the password methods work; an unlock over a WebSocket is that connection\'s alone, and ends when it closes', async () => {
  const safe = await serve({ personal: { enabled: true } });
  try {
    assert.is((await safe.call('personal_importRawKey', [KEY, 'pw'])).result, KEY_ADDRESS);
    const r = await safe.call('personal_unlockAccount', [KEY_ADDRESS, 'pw']);
    assert.is(r.error?.code, -32000);
    assert.match(r.error!.message, /^account unlock with HTTP access is forbidden: .*keystore-insecure-unlock-allowed/);
    assert.is((await safe.call('personal_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB) }, 'pw'])).result, '0x' + '5e'.repeat(32));
    assert.match((await safe.call('personal_sign', ['0x01', KEY_ADDRESS, 'pw'])).result, /^0x[0-9a-f]{130}$/);

    const owner = connect(safe);
    const other = connect(safe);
    const needed = { code: -32000, message: 'authentication needed: password or unlock' };
    const send = [{ from: KEY_ADDRESS, to: hex(BOB) }];
    assert.equal((await owner.call('eth_sendTransaction', send)).error, needed);
    assert.equal((await owner.call('personal_unlockAccount', [KEY_ADDRESS, 'pw', 60])).result, true);
    assert.is((await owner.call('eth_sendTransaction', send)).result, '0x' + '5e'.repeat(32));
    assert.match((await owner.call('eth_sign', [KEY_ADDRESS, '0x01'])).result, /^0x[0-9a-f]{130}$/);
    // Nobody else: not another connection (a page in another tab, another process), not HTTP.
    assert.equal((await other.call('eth_sendTransaction', send)).error, needed);
    assert.equal((await other.call('eth_sign', [KEY_ADDRESS, '0x01'])).error, needed);
    assert.equal((await safe.call('eth_sendTransaction', send)).error, needed);
    assert.equal((await safe.call('eth_sign', [KEY_ADDRESS, '0x01'])).error, needed);
    // Another connection locking it over HTTP or its own socket does not touch the owner's unlock.
    await safe.call('personal_lockAccount', [KEY_ADDRESS]);
    await other.call('personal_lockAccount', [KEY_ADDRESS]);
    assert.is((await owner.call('eth_sendTransaction', send)).result, '0x' + '5e'.repeat(32));
    // The duration still holds; the owner's lock ends it; so does closing.
    safe.clock.advance(60_000);
    assert.equal((await owner.call('eth_sendTransaction', send)).error, needed);
    await owner.call('personal_unlockAccount', [KEY_ADDRESS, 'pw']);
    assert.equal((await owner.call('personal_lockAccount', [KEY_ADDRESS])).result, true);
    assert.equal((await owner.call('eth_sendTransaction', send)).error, needed);
    await owner.call('personal_unlockAccount', [KEY_ADDRESS, 'pw']);
    owner.c.close();
    const again = connect(safe);
    assert.equal((await again.call('eth_sendTransaction', send)).error, needed);
  } finally {
    await safe.close();
  }
});

test('with keystore-insecure-unlock-allowed an HTTP unlock is every caller\'s (geth\'s --allow-insecure-unlock): HTTP and any WebSocket may use it', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  assert.is(await ok('personal_unlockAccount', [KEY_ADDRESS, 'pw']), true);
  const anyone = connect(s);
  assert.is((await anyone.call('eth_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB) }])).result, '0x' + '5e'.repeat(32));
  assert.is((await s.call('eth_sendTransaction', [{ from: KEY_ADDRESS, to: hex(BOB) }])).result, '0x' + '5e'.repeat(32));
});

test('failed password checks are throttled per account: 3 free, then one check per window doubling from 1 s to 60 s (concurrent ones refused, -32005, no derivation); the right password after the window clears it; a quiet account forgets', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  const other = await ok('personal_newAccount', ['other']);
  const wrong = { code: -32000, message: 'could not decrypt key with given password' };
  const throttled = (secs: number) => ({ code: -32005, message: `too many failed password attempts for ${KEY_ADDRESS}: try again in ${secs} s` });
  const unlock = (pw: string) => s.call('personal_unlockAccount', [KEY_ADDRESS, pw]);
  for (let i = 0; i < 3; i++) assert.equal((await unlock('guess')).error, wrong, `free guess ${i}`);
  // Even the right password waits for the window: the count is of guesses, whoever makes them.
  assert.equal((await unlock('pw')).error, throttled(1));
  assert.equal((await s.call('personal_sign', ['0x01', KEY_ADDRESS, 'pw'])).error, throttled(1), 'every password check shares it');
  assert.is((await s.call('personal_unlockAccount', [other, 'other'])).result, true, 'per account: another is not throttled');
  s.clock.advance(1_000);
  assert.is((await unlock('pw')).result, true, 'the owner, once the window passed');
  // Cleared: three free guesses again; then windows of 1, 2, 4, … 60 s.
  for (let i = 0; i < 3; i++) assert.equal((await unlock('guess')).error, wrong);
  const windows = [1, 2, 4, 8, 16, 32, 60, 60];
  for (const w of windows) {
    assert.equal((await unlock('guess')).error, throttled(w), `window ${w}`);
    s.clock.advance(w * 1000);
    assert.equal((await unlock('guess')).error, wrong, `a guess after ${w} s`);
  }
  // At most one check per window, however many arrive together.
  s.clock.advance(60_000);
  const burst = await Promise.all(Array.from({ length: 6 }, () => unlock('guess')));
  assert.equal(burst.map((r) => r.error!.code).sort((a, b) => a - b), [-32005, -32005, -32005, -32005, -32005, -32000]);
  // The guesser stops: the owner gets in within 60 s.
  s.clock.advance(60_000);
  assert.is((await unlock('pw')).result, true);
  // A quiet account forgets its failures (window + 60 s without a check).
  for (let i = 0; i < 4; i++) await unlock('guess');
  s.clock.advance(1_000 + 60_000 + 1_000);
  for (let i = 0; i < 3; i++) assert.equal((await unlock('guess')).error, wrong, `free again ${i}`);
  // Unknown accounts cost no derivation and are not throttled.
  for (let i = 0; i < 5; i++) assert.equal((await s.call('personal_unlockAccount', [hex(BOB), 'x'])).error, { code: -32000, message: 'no key for given address or file' });
});

test('sweep with personal_ on: malformed params to every personal_ method never give -32603, over HTTP and over a WebSocket', async () => {
  await ok('personal_importRawKey', [KEY, 'pw']);
  const junk: unknown[] = [null, true, 0, -1, 1.5, '', 'x', '0x', '0xzz', {}, [], { from: 1 }, { from: KEY_ADDRESS, to: '0x' }, '\u0000'];
  const ws = connect(s);
  for (const method of PERSONAL) {
    for (const j of junk) {
      for (const params of [[j], [KEY_ADDRESS, j], [j, KEY_ADDRESS], [j, j, j], [KEY_ADDRESS, 'pw', j]]) {
        for (const r of [await s.call(method, params), await ws.call(method, params)]) {
          assert.is.not(r.error?.code, -32603, `${method} ${JSON.stringify(params)}: ${JSON.stringify(r.error)}`);
        }
      }
    }
  }
  assert.not.ok(s.log.lines.some((l) => l.level === 'error'));
});

test('chain config: eth-apis listing "internal-personal" turns personal_ on (also coreth\'s deprecated name and geth\'s "personal"), keystore-insecure-unlock-allowed allows HTTP unlocks; an unknown API name or a wrong type fails naming the key; the VM serves what it says', async () => {
  const parse = (o: unknown) => parseChainConfig(utf8Encode(JSON.stringify(o))).options;
  assert.equal(parse({ 'eth-apis': ['eth', 'eth-filter', 'net', 'web3', 'internal-eth', 'internal-blockchain', 'internal-transaction'] }), { personalApi: false, debugApi: false });
  for (const name of ['internal-personal', 'internal-private-personal', 'personal']) assert.equal(parse({ 'eth-apis': ['eth', name] }), { personalApi: true, debugApi: false }, name);
  assert.equal(parse({ 'keystore-insecure-unlock-allowed': true }), { allowInsecureUnlock: true });
  for (const [config, want] of [
    [{ 'eth-apis': 'personal' }, /^invalid chain config file: eth-apis: must be a list of API names$/],
    [{ 'eth-apis': ['eth', 'internal-personl'] }, /^invalid chain config file: eth-apis: API service "internal-personl" not found \(coreth's names: eth, /],
    [{ 'keystore-insecure-unlock-allowed': 'yes' }, /^invalid chain config file: keystore-insecure-unlock-allowed: must be true or false$/],
  ] as const) {
    assert.throws(() => parse(config), (e: Error) => want.test(e.message), JSON.stringify(config));
  }
  // Through the VM: a chain config turns it on; without one it is off.
  const callVm = async (vm: { createHandlers(): Promise<Array<{ path: string; http?: (req: never, res: never) => unknown }>> }, method: string, params: unknown[]) => {
    const rpc = (await vm.createHandlers()).find((h) => h.path === 'rpc')!.http!;
    const server = createServer((req, res) => void rpc(req as never, res as never));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
    } finally {
      server.close();
    }
  };
  const plain = await startVM();
  const on = new EvmVM();
  try {
    assert.is((await callVm(plain, 'personal_listAccounts', [])).error?.code, -32601);
    await on.initialize(testChainContext(), { genesis: GENESIS, config: utf8Encode(JSON.stringify({ 'eth-apis': ['eth', 'internal-personal'] })) });
    await on.setState('normalOp');
    assert.equal((await callVm(on, 'personal_listAccounts', [])).result, []);
    const address = (await callVm(on, 'personal_newAccount', ['a password'])).result;
    assert.match((await callVm(on, 'personal_unlockAccount', [address, 'a password'])).error!.message, /^account unlock with HTTP access is forbidden/);
  } finally {
    await plain.shutdown();
    await on.shutdown();
  }
});

test.run();
