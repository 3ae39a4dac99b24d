/**
 * A hardhat 2 project (test/fixtures/hardhat-project) with its `cornice` network pointed at the node:
 * `hardhat run --network cornice scripts/deploy-and-call.js` compiles with solc-js (offline), deploys
 * Greeter and calls it, signing with the configured ewoq key as hardhat does for any remote network.
 * `scripts/trace.js` traces a tx through hardhat-ethers' `ethers.provider.send('debug_traceTransaction')`
 * unchanged (issue 35): the call frame and the struct logger as geth answers them (cornice only).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EWOQ_EVM_ADDRESS, HARDHAT_BIN, HARDHAT_PROJECT, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';
import { runCli } from '../src/process.js';

let dir: string;
let target: EvmTarget;

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-hardhat-'));
    target = await startEvmTarget({ dataDir: join(dir, 'node'), dbType: 'memory' });
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

const hardhat = (script: string) =>
  runCli(['run', '--network', 'cornice', script], 180_000, {
    bin: HARDHAT_BIN,
    cwd: HARDHAT_PROJECT,
    env: { CORNICE_EVM_RPC_URL: target.rpcUrl, CORNICE_HARDHAT_OUT: join(dir, 'hardhat-out'), HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
  });

test('hardhat run --network cornice: compiles offline with solc-js, deploys Greeter, calls and transacts', async () => {
  const r = await hardhat('scripts/deploy-and-call.js');
  assert.is(r.code, 0, `hardhat failed: ${r.stderr}\n${r.stdout}`);
  assert.match(r.stdout, /Compiled 1 Solidity file successfully/);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  assert.is(out.network, 'cornice');
  assert.is(out.chainId, Number((await target.call('eth_chainId')).result));
  assert.is(out.from, EWOQ_EVM_ADDRESS);
  assert.is(out.deployStatus, 1);
  assert.is(out.setStatus, 1);
  assert.is(out.before, 'hello from hardhat');
  assert.is(out.after, 'hello, cornice');
  assert.equal(out.event, { name: 'GreetingChanged', by: EWOQ_EVM_ADDRESS, greeting: 'hello, cornice' });
  // What hardhat did is on the node.
  const code = (await target.call('eth_getCode', [out.address, 'latest'])).result;
  assert.ok(typeof code === 'string' && code.length > 2, 'the contract has code');
  assert.is(Number((await target.call('eth_getTransactionCount', [EWOQ_EVM_ADDRESS, 'latest'])).result), 2);
});

test('hardhat-ethers: ethers.provider.send(\'debug_traceTransaction\') answers the call frame and the struct logger', async () => {
  // hardhat's own node knows only the struct logger ("Hardhat currently only supports the default tracer").
  if (target.kind === 'hardhat') return;
  const r = await hardhat('scripts/trace.js');
  assert.is(r.code, 0, `hardhat failed: ${r.stderr}\n${r.stdout}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  assert.is(out.status, 1);
  const frame = out.callFrame;
  assert.is(frame.type, 'CALL');
  assert.is(frame.from, EWOQ_EVM_ADDRESS.toLowerCase());
  assert.is(frame.to, out.address.toLowerCase());
  assert.is(BigInt(frame.gasUsed), BigInt(out.gasUsed), 'the top frame\'s gasUsed is the receipt\'s');
  assert.is(frame.value, '0x0');
  assert.is(frame.error, undefined);
  assert.is(frame.calls, undefined);
  assert.ok(frame.logs === undefined, 'logs only with withLog');
  // The node's own receipt says the same.
  const receipt = (await target.call('eth_getTransactionReceipt', [out.hash])).result;
  assert.is(BigInt(receipt.gasUsed), BigInt(frame.gasUsed));
  assert.ok(out.structLog.structLogs > 0, 'struct logs');
  assert.is(out.structLog.failed, false);
  assert.is(out.structLog.gas, Number(out.gasUsed));
  for (const op of ['SSTORE', 'LOG2', 'STOP']) assert.ok(out.structLog.ops.includes(op), `${op} in ${out.structLog.ops}`);
});

test.run();
