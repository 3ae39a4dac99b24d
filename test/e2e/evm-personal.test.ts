/**
 * Node-held accounts (personal_) on a real node. Off on a node started like `npm start` (every
 * personal_ method, eth_sendTransaction and eth_sign answer -32601 naming the chain config key:
 * issue 32, point 9). Turned on by the C-Chain's config.json (coreth's `eth-apis` with
 * "internal-personal"): create and import keys, send and sign with a password, wrong passwords
 * refused clearly and throttled, an unlock over HTTP refused (geth's text) while an unlock over a
 * WebSocket serves that connection only — not HTTP callers, not another socket, not a page on
 * another origin (whose socket the node refuses) — and the accounts still there, locked, after a
 * restart. With `keystore-insecure-unlock-allowed` an HTTP unlock works and serves every caller, as
 * geth's --allow-insecure-unlock. Cornice only: hardhat's node has no personal_ namespace.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { type EvmTarget, evmTargetKind, EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, ok, setupReporting, startEvmTarget } from '../src/evm.js';

const PASSWORD = 'a Strong passw0rd!';
const cornice = evmTargetKind() === 'cornice';
let dir: string;
let target: EvmTarget;

/** coreth's default eth-apis plus internal-personal. */
const PERSONAL_ON = { 'eth-apis': ['eth', 'eth-filter', 'net', 'web3', 'internal-eth', 'internal-blockchain', 'internal-transaction', 'internal-personal'] };

async function writeChainConfig(config: Record<string, unknown>): Promise<void> {
  await mkdir(join(dir, 'configs', 'chains', 'C'), { recursive: true });
  await writeFile(join(dir, 'configs', 'chains', 'C', 'config.json'), JSON.stringify(config));
}

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-personal-'));
    if (cornice) target = await startEvmTarget({ dataDir: dir });
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function receipt(hash: string): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await ok(target, 'eth_getTransactionReceipt', [hash]);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`no reply for ${hash}`);
}

/** A WebSocket client of the C-Chain's /ws endpoint. */
async function socket(headers: Record<string, string> = {}): Promise<{ call(method: string, params?: unknown[]): Promise<any>; close(): void }> {
  const ws = new WebSocket(target.wsUrl, { headers });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  let id = 0;
  const waiting = new Map<number, (reply: any) => void>();
  ws.on('message', (data) => {
    const reply = JSON.parse(String(data));
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  return {
    call: (method, params = []) =>
      new Promise((resolve) => {
        const mine = ++id;
        waiting.set(mine, resolve);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }));
      }),
    close: () => ws.close(),
  };
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

test('off on a node started like npm start: personal_, eth_sendTransaction and eth_sign answer -32601 naming the chain config key; eth_accounts is empty', async () => {
  if (!cornice) return;
  for (const [method, params] of [
    ['personal_newAccount', [PASSWORD]],
    ['personal_importRawKey', [EWOQ_EVM_KEY.slice(2), PASSWORD]],
    ['personal_unlockAccount', [EWOQ_EVM_ADDRESS, PASSWORD]],
    ['eth_sendTransaction', [{ from: EWOQ_EVM_ADDRESS, to: EWOQ_EVM_ADDRESS }]],
    ['eth_sign', [EWOQ_EVM_ADDRESS, '0x01']],
  ] as const) {
    const r = await target.call(method, [...params]);
    assert.is(r.error?.code, -32601, method);
    assert.match(r.error!.message, /node-held accounts are off on this chain \(chain config key "eth-apis" must list "internal-personal"\)$/);
  }
  assert.equal(await ok(target, 'eth_accounts'), []);
});

test('on (eth-apis with internal-personal): accounts, password sends and signatures; HTTP unlock refused; a WebSocket unlock is that connection\'s alone; wrong passwords refused and throttled; accounts survive a restart, locked', async () => {
  if (!cornice) return;
  await writeChainConfig(PERSONAL_ON);
  await target.restart();
  const fresh: string = await ok(target, 'personal_newAccount', [PASSWORD]);
  assert.match(fresh, /^0x[0-9a-fA-F]{40}$/);
  const ewoq: string = await ok(target, 'personal_importRawKey', [EWOQ_EVM_KEY.slice(2), PASSWORD]);
  assert.ok(same(ewoq, EWOQ_EVM_ADDRESS));
  const listed: string[] = await ok(target, 'personal_listAccounts');
  assert.equal(listed.map((a) => a.toLowerCase()), [fresh, ewoq].map((a) => a.toLowerCase()));
  assert.equal((await ok(target, 'eth_accounts')).map((a: string) => a.toLowerCase()), listed.map((a) => a.toLowerCase()));
  assert.is((await target.call('personal_newAccount', [''])).error?.code, -32602, 'an empty password');

  // Send with the password: nonce, gas and fees filled in by the node.
  const hash: string = await ok(target, 'personal_sendTransaction', [{ from: ewoq, to: fresh, value: '0xde0b6b3a7640000' }, PASSWORD]);
  assert.is((await receipt(hash)).status, '0x1');
  assert.is(await ok(target, 'eth_getBalance', [fresh, 'latest']), '0xde0b6b3a7640000');

  // An unlock over HTTP would serve every caller: refused, as geth without --allow-insecure-unlock.
  const overHttp = await target.call('personal_unlockAccount', [fresh, PASSWORD, 60]);
  assert.is(overHttp.error?.code, -32000);
  assert.match(overHttp.error!.message, /^account unlock with HTTP access is forbidden/);

  // Over a WebSocket: that connection only.
  const owner = await socket();
  const other = await socket();
  try {
    assert.is((await owner.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }])).error?.message, 'authentication needed: password or unlock');
    assert.is((await owner.call('personal_unlockAccount', [fresh, PASSWORD, 60])).result, true);
    const back: string = (await owner.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }])).result;
    assert.is((await receipt(back)).status, '0x1');
    for (const r of [await other.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }]), await target.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }]), await target.call('eth_sign', [fresh, '0x01'])]) {
      assert.is(r.error?.message, 'authentication needed: password or unlock', 'nobody else may use it');
    }
    // A page on another origin cannot even open a socket (the node refuses its Origin).
    const evil = await socket({ origin: 'https://evil.example' }).then(() => 'open', (e: Error) => e.message);
    assert.is(evil, 'HTTP 403');
    assert.is((await owner.call('personal_lockAccount', [fresh])).result, true);
    assert.is((await owner.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }])).error?.message, 'authentication needed: password or unlock', 'locked again');
  } finally {
    owner.close();
    other.close();
  }

  // A wrong password: a clear error, not an internal one, and nothing sent; three in a row, then the account waits.
  for (let i = 0; i < 3; i++) {
    const wrong = await target.call('personal_sendTransaction', [{ from: ewoq, to: fresh, value: '0x1' }, 'not the password']);
    assert.equal(wrong.error, { code: -32000, message: 'could not decrypt key with given password' });
  }
  const throttled = await target.call('personal_sign', ['0xdeadbeef', ewoq, PASSWORD]);
  assert.is(throttled.error?.code, -32005);
  assert.match(throttled.error!.message, /^too many failed password attempts for 0x[0-9a-f]{40}: try again in 1 s$/);
  await new Promise((r) => setTimeout(r, 1_100));

  // EIP-191 signing and recovery, once the window passed.
  const sig: string = await ok(target, 'personal_sign', ['0xdeadbeef', ewoq, PASSWORD]);
  assert.match(sig, /^0x[0-9a-f]{130}$/);
  assert.ok(same(await ok(target, 'personal_ecRecover', ['0xdeadbeef', sig]), ewoq));

  // The accounts survive a restart (stored encrypted), locked.
  await target.restart();
  assert.equal((await ok(target, 'personal_listAccounts')).map((a: string) => a.toLowerCase()), listed.map((a) => a.toLowerCase()));
  assert.ok((await target.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }])).error, 'locked after a restart');
  const again: string = await ok(target, 'personal_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }, PASSWORD]);
  assert.is((await receipt(again)).status, '0x1');
});

test('keystore-insecure-unlock-allowed: an HTTP unlock works and serves every caller (geth\'s --allow-insecure-unlock)', async () => {
  if (!cornice) return;
  await writeChainConfig({ ...PERSONAL_ON, 'keystore-insecure-unlock-allowed': true });
  await target.restart();
  const [fresh, ewoq] = (await ok(target, 'personal_listAccounts')) as string[];
  assert.is(await ok(target, 'personal_unlockAccount', [fresh, PASSWORD, 60]), true);
  const anyone = await socket();
  try {
    const sent = await anyone.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }]);
    assert.is((await receipt(sent.result)).status, '0x1');
  } finally {
    anyone.close();
  }
  assert.is(await ok(target, 'personal_lockAccount', [fresh]), true);
});

test.run();
