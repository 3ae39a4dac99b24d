/**
 * Node-held accounts (personal_) on a real node: create and import keys, send with a password, unlock
 * for eth_sendTransaction, sign and recover (EIP-191), wrong passwords refused clearly, and the
 * accounts still there after a restart (kept encrypted in the chain's store). Cornice only: hardhat's
 * node has no personal_ namespace.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, evmTargetKind, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

const PASSWORD = 'a Strong passw0rd!';
const cornice = evmTargetKind() === 'cornice';
let dir: string;
let target: EvmTarget;

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

async function ok(method: string, params: unknown[] = []): Promise<any> {
  const r = await target.call(method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function receipt(hash: string): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await ok('eth_getTransactionReceipt', [hash]);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`no receipt for ${hash}`);
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

test('personal_: new and imported accounts, send with a password, unlock, sign and recover, wrong password, restart', async () => {
  if (!cornice) return;
  const fresh: string = await ok('personal_newAccount', [PASSWORD]);
  assert.match(fresh, /^0x[0-9a-fA-F]{40}$/);
  const ewoq: string = await ok('personal_importRawKey', [EWOQ_EVM_KEY.slice(2), PASSWORD]);
  assert.ok(same(ewoq, EWOQ_EVM_ADDRESS));
  const listed: string[] = await ok('personal_listAccounts');
  assert.equal(listed.map((a) => a.toLowerCase()), [fresh, ewoq].map((a) => a.toLowerCase()));
  assert.equal((await ok('eth_accounts')).map((a: string) => a.toLowerCase()), listed.map((a) => a.toLowerCase()));

  // Send with the password: nonce, gas and fees filled in by the node.
  const hash: string = await ok('personal_sendTransaction', [{ from: ewoq, to: fresh, value: '0xde0b6b3a7640000' }, PASSWORD]);
  assert.is((await receipt(hash)).status, '0x1');
  assert.is(await ok('eth_getBalance', [fresh, 'latest']), '0xde0b6b3a7640000');

  // A wrong password: a clear error, not an internal one, and nothing sent.
  const wrong = await target.call('personal_sendTransaction', [{ from: ewoq, to: fresh, value: '0x1' }, 'not the password']);
  assert.ok(wrong.error, 'refused');
  assert.is.not(wrong.error!.code, -32603);
  assert.match(wrong.error!.message, /password|decrypt/i);

  // eth_sendTransaction needs an unlocked account.
  const locked = await target.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }]);
  assert.ok(locked.error, 'a locked account cannot send');
  assert.is.not(locked.error!.code, -32603);
  assert.is(await ok('personal_unlockAccount', [fresh, PASSWORD, 60]), true);
  const back: string = await ok('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }]);
  assert.is((await receipt(back)).status, '0x1');
  assert.is(await ok('personal_lockAccount', [fresh]), true);
  assert.ok((await target.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }])).error, 'locked again');

  // EIP-191 signing and recovery.
  const sig: string = await ok('personal_sign', ['0xdeadbeef', ewoq, PASSWORD]);
  assert.match(sig, /^0x[0-9a-f]{130}$/);
  assert.ok(same(await ok('personal_ecRecover', ['0xdeadbeef', sig]), ewoq));

  // The accounts survive a restart (stored encrypted), locked.
  await target.restart();
  assert.equal((await ok('personal_listAccounts')).map((a: string) => a.toLowerCase()), listed.map((a) => a.toLowerCase()));
  assert.ok((await target.call('eth_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }])).error, 'locked after a restart');
  const again: string = await ok('personal_sendTransaction', [{ from: fresh, to: ewoq, value: '0x1' }, PASSWORD]);
  assert.is((await receipt(again)).status, '0x1');
});

test.run();
