/**
 * The C-Chain's config.json (`<data-dir>/configs/chains/C/config.json`, coreth's key names) on a
 * real node: `allow-unprotected-txs` lets a pre-EIP-155 tx in over RPC (refused without it), and
 * `rpc-gas-cap` caps eth_call's gas. Cornice only: hardhat's node has no such file.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Wallet } from 'ethers';
import { EWOQ_EVM_KEY, evmTargetKind, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

let dir: string;
let target: EvmTarget | undefined;
const skip = evmTargetKind() !== 'cornice';

test.before(
  setupReporting(async () => {
    if (skip) return;
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-config-'));
    await mkdir(join(dir, 'configs', 'chains', 'C'), { recursive: true });
    await writeFile(join(dir, 'configs', 'chains', 'C', 'config.json'), JSON.stringify({ 'allow-unprotected-txs': true, 'rpc-gas-cap': 100_000, 'eth-apis': ['eth'] }));
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
  }),
);

test.after(async () => {
  await target?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('allow-unprotected-txs: a pre-EIP-155 tx (chain ID 0, v = 27/28) is admitted and mined', async () => {
  if (!target) return;
  const raw = await new Wallet(EWOQ_EVM_KEY).signTransaction({ type: 0, chainId: 0, nonce: 0, to: Wallet.createRandom().address, value: 1n, gasLimit: 21_000n, gasPrice: 30_000_000_000n });
  const sent = await target.call('eth_sendRawTransaction', [raw]);
  assert.type(sent.result, 'string', JSON.stringify(sent.error));
  let receipt: { status: string } | null = null;
  for (let i = 0; i < 100 && !receipt; i++) {
    receipt = (await target.call('eth_getTransactionReceipt', [sent.result])).result as { status: string } | null;
    if (!receipt) await new Promise((r) => setTimeout(r, 50));
  }
  assert.is(receipt?.status, '0x1');
});

test('rpc-gas-cap: a call of ~213,000 gas runs out at the cap of 100,000, also when it asks for more', async () => {
  if (!target) return;
  const at = '0x00000000000000000000000000000000000000c1';
  // PUSH2 0x2000; JUMPDEST; PUSH1 1; SWAP1; SUB; DUP1; PUSH1 3; JUMPI; STOP: 8,192 rounds of 26 gas, then success.
  const override = { [at]: { code: '0x6120005b600190038060035700' } };
  for (const gas of [undefined, '0x989680']) {
    const r = await target.call('eth_call', [{ to: at, ...(gas ? { gas } : {}) }, 'latest', override]);
    assert.is(r.error?.code, -32000, `gas ${gas}: ${JSON.stringify(r)}`);
    assert.is(r.error?.message, 'out of gas', `gas ${gas}`);
  }
  const est = await target.call('eth_estimateGas', [{ to: at }, 'latest', override]);
  assert.ok(est.error, 'no estimate within the cap');
});

test.run();
