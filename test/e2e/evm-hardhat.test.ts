/**
 * A hardhat 2 project (test/fixtures/hardhat-project) with its `cornice` network pointed at the node:
 * `hardhat run --network cornice scripts/deploy-and-call.js` compiles with solc-js (offline), deploys
 * Greeter and calls it, signing with the configured ewoq key as hardhat does for any remote network.
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

test('hardhat run --network cornice: compiles offline with solc-js, deploys Greeter, calls and transacts', async () => {
  const r = await runCli(['run', '--network', 'cornice', 'scripts/deploy-and-call.js'], 180_000, {
    bin: HARDHAT_BIN,
    cwd: HARDHAT_PROJECT,
    env: { CORNICE_EVM_RPC_URL: target.rpcUrl, CORNICE_HARDHAT_OUT: join(dir, 'hardhat-out'), HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
  });
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

test.run();
