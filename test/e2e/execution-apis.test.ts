/**
 * Every eth_ method of the Ethereum execution-apis spec, called on a real node, its result checked
 * against the spec's result schema (test/fixtures/execution-apis). The same calls run against anvil
 * in the same file: what anvil answers passes the same validator, so a failure here is the node's,
 * not the validator's.
 *
 * A method answered -32601 must be one the node documents as not served (UNSERVED, with its reason,
 * as plugins/evm/API.md says); any other error, or a result the schema refuses, fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { postRpc, type RpcReply } from '@cornice/core/testing';
import { Interface, Wallet } from 'ethers';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, ok, sendFromEwoq, setupReporting, startEvmTarget, type EvmTarget, type Rpc } from '../src/evm.js';
import { loadMethods, resultValidators } from '../src/execution-apis.js';
import { freePort, until } from '../src/network.js';
import { compileToken } from '../src/solidity.js';

const require = createRequire(import.meta.url);

/** Methods Cornice answers -32601, each with its reason in the error (plugins/evm/API.md lists them). */
const CORNICE_UNSERVED: Readonly<Record<string, string>> = {
  eth_config: 'an Ethereum fork schedule by fork ID (EIP-7910); this chain has no fork IDs',
};

/**
 * The C-Chain's config with node-held accounts on (eth_sign, eth_signTransaction, eth_sendTransaction),
 * unlocked over HTTP as anvil's dev accounts are.
 */
const PERSONAL_ON = {
  'eth-apis': ['eth', 'eth-filter', 'net', 'web3', 'internal-eth', 'internal-blockchain', 'internal-transaction', 'internal-personal'],
  'keystore-insecure-unlock-allowed': true,
};

/**
 * Where anvil's answers leave the spec's schemas, by method: the validator accepts everything else
 * anvil answers, which shows it is not stricter than the clients it stands for.
 */
const ANVIL_DEVIATIONS: Readonly<Record<string, string>> = {
  eth_config: 'next and last are null where the schema wants them absent',
  eth_getBlockReceipts: 'receipts carry blockTimestamp, which ReceiptInfo does not list',
  eth_getTransactionReceipt: 'receipts carry blockTimestamp, which ReceiptInfo does not list',
  eth_signTransaction: 'the raw transaction alone, not {raw, tx}',
  eth_simulateV1: 'simulated blocks lack size',
};

const methods = loadMethods();
const validators = resultValidators();
const token = compileToken();
const erc20 = new Interface(token.abi);
const RECIPIENT = '0x00000000000000000000000000000000c0ffee01';

interface Target extends Rpc {
  kind: string;
  stop(): Promise<void>;
  /** An account the node holds, unlocked. */
  nodeAccount(): Promise<string>;
}

async function startCornice(dir: string): Promise<Target> {
  await mkdir(join(dir, 'configs', 'chains', 'C'), { recursive: true });
  await writeFile(join(dir, 'configs', 'chains', 'C', 'config.json'), JSON.stringify(PERSONAL_ON));
  const t: EvmTarget = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
  return {
    kind: 'cornice',
    call: t.call,
    stop: t.stop,
    nodeAccount: async () => {
      const addr = await ok(t, 'personal_importRawKey', [Wallet.createRandom().privateKey.slice(2), 'a password']);
      await ok(t, 'personal_unlockAccount', [addr, 'a password', 600]);
      return addr;
    },
  };
}

/** anvil from the npm package @foundry-rs/anvil (the platform binary itself, so that stop() ends it), on the C-Chain's fork. */
async function startAnvil(): Promise<Target> {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string] ?? process.arch;
  const bin = join(dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), 'bin', 'anvil');
  const port = await freePort();
  const proc: ChildProcess = spawn(bin, ['--host', '127.0.0.1', '--port', String(port), '--hardfork', 'cancun', '--silent'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const call = (method: string, params: unknown[] = []) => postRpc(url, method, params);
  await until('anvil', async () => (await call('eth_chainId').catch(() => undefined))?.result ?? undefined, 30_000);
  // Same sender as on the node: ewoq, funded here.
  await call('anvil_setBalance', [EWOQ_EVM_ADDRESS, '0x3635c9adc5dea00000']);
  return {
    kind: 'anvil',
    call,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
    nodeAccount: async () => (await call('eth_accounts')).result[0],
  };
}

interface Outcome {
  readonly method: string;
  readonly params: unknown[];
  readonly reply: RpcReply;
}

/** Builds a chain with every transaction type, a contract and logs, then calls every spec method on it. */
async function exercise(t: Target): Promise<Outcome[]> {
  const chainId = BigInt(await ok(t, 'eth_chainId'));
  const node = await t.nodeAccount();
  await sendFromEwoq(t, chainId, { type: 2, to: node, value: 10n ** 18n });

  const out: Outcome[] = [];
  const recorded = async (method: string, params: unknown[] = []): Promise<any> => {
    const reply = await t.call(method, params);
    out.push({ method, params, reply });
    if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply.result;
  };
  const logFilter = await recorded('eth_newFilter', [{ fromBlock: '0x0' }]);
  const blockFilter = await recorded('eth_newBlockFilter');
  const pendingFilter = await recorded('eth_newPendingTransactionFilter');

  const deployed = await sendFromEwoq(t, chainId, { type: 2, data: erc20.encodeDeploy([10n ** 24n]).replace(/^0x/, token.bytecode) });
  const tokenAddr: string = deployed.contractAddress;
  const transferData = erc20.encodeFunctionData('transfer', [RECIPIENT, 5n]);
  const typed2 = await sendFromEwoq(t, chainId, { type: 2, to: tokenAddr, data: transferData });
  const typed1 = await sendFromEwoq(t, chainId, { type: 1, to: RECIPIENT, value: 1n, accessList: [{ address: tokenAddr, storageKeys: [`0x${'0'.repeat(64)}`] }] });
  const legacy = await sendFromEwoq(t, chainId, { type: 0, to: RECIPIENT, value: 2n });
  const signed = await new Wallet(EWOQ_EVM_KEY).signTransaction({
    chainId,
    type: 2,
    nonce: Number(BigInt(await ok(t, 'eth_getTransactionCount', [EWOQ_EVM_ADDRESS, 'pending']))),
    to: RECIPIENT,
    value: 3n,
    gasLimit: 21_000n,
    maxFeePerGas: BigInt(await ok(t, 'eth_gasPrice')) * 2n,
    maxPriorityFeePerGas: 1n,
  });

  const head = await ok(t, 'eth_getBlockByNumber', ['latest', false]);
  const gasPrice = await ok(t, 'eth_gasPrice');
  const slot0 = `0x${'0'.repeat(64)}`;
  const balanceSlot = '0x' + '0'.repeat(64); // checked as present or absent alike
  const calls: [string, unknown[]][] = [
    ['eth_chainId', []],
    ['eth_syncing', []],
    ['eth_coinbase', []],
    ['eth_accounts', []],
    ['eth_blockNumber', []],
    ['eth_config', []],
    ['eth_getBlockByHash', [typed2.blockHash, false]],
    ['eth_getBlockByHash', [typed2.blockHash, true]],
    ['eth_getBlockByHash', [`0x${'ab'.repeat(32)}`, false]],
    ['eth_getBlockByNumber', ['latest', true]],
    ['eth_getBlockByNumber', ['0x0', false]],
    ['eth_getBlockByNumber', [typed1.blockNumber, true]],
    ['eth_getBlockByNumber', [legacy.blockNumber, true]],
    ['eth_getBlockByNumber', ['0xffffffff', false]],
    ['eth_getBlockTransactionCountByHash', [typed2.blockHash]],
    ['eth_getBlockTransactionCountByNumber', [typed2.blockNumber]],
    ['eth_getUncleCountByBlockHash', [typed2.blockHash]],
    ['eth_getUncleCountByBlockNumber', [typed2.blockNumber]],
    ['eth_getBlockReceipts', [deployed.blockHash]],
    ['eth_getBlockReceipts', [typed2.blockNumber]],
    ['eth_getBlockReceipts', ['latest']],
    ['eth_call', [{ to: tokenAddr, input: erc20.encodeFunctionData('balanceOf', [RECIPIENT]) }, 'latest']],
    ['eth_call', [{ to: tokenAddr, data: erc20.encodeFunctionData('totalSupply') }, typed2.blockHash]],
    ['eth_estimateGas', [{ from: EWOQ_EVM_ADDRESS, to: tokenAddr, input: transferData }]],
    ['eth_createAccessList', [{ from: EWOQ_EVM_ADDRESS, to: tokenAddr, input: transferData }, 'latest']],
    [
      'eth_simulateV1',
      [
        {
          blockStateCalls: [
            {
              stateOverrides: { '0xc000000000000000000000000000000000000000': { balance: '0x3e8' } },
              calls: [
                { from: '0xc000000000000000000000000000000000000000', to: '0xc100000000000000000000000000000000000000', value: '0x3e8' },
                { from: EWOQ_EVM_ADDRESS, to: tokenAddr, input: transferData },
              ],
            },
            { calls: [{ from: EWOQ_EVM_ADDRESS, to: tokenAddr, input: erc20.encodeFunctionData('transferFrom', [RECIPIENT, EWOQ_EVM_ADDRESS, 1n]) }] },
          ],
        },
        'latest',
      ],
    ],
    ['eth_gasPrice', []],
    ['eth_baseFee', []],
    ['eth_blobBaseFee', []],
    ['eth_maxPriorityFeePerGas', []],
    ['eth_feeHistory', ['0x4', 'latest', [25, 75]]],
    ['eth_feeHistory', ['0x2', 'latest', []]],
    ['eth_getFilterChanges', [logFilter]],
    ['eth_getFilterChanges', [blockFilter]],
    ['eth_getFilterChanges', [pendingFilter]],
    ['eth_getFilterLogs', [logFilter]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: tokenAddr }]],
    ['eth_getLogs', [{ blockHash: typed2.blockHash }]],
    ['eth_uninstallFilter', [blockFilter]],
    ['eth_sign', [node, '0xdeadbeef']],
    ['eth_signTransaction', [{ from: node, to: RECIPIENT, value: '0x1', gas: '0x5208', gasPrice, nonce: '0x0' }]],
    ['eth_getBalance', [EWOQ_EVM_ADDRESS, 'latest']],
    ['eth_getBalance', [EWOQ_EVM_ADDRESS, typed2.blockHash]],
    ['eth_getStorageAt', [tokenAddr, '0x0', 'latest']],
    ['eth_getTransactionCount', [EWOQ_EVM_ADDRESS, typed1.blockNumber]],
    ['eth_getCode', [tokenAddr, 'latest']],
    ['eth_getProof', [tokenAddr, [slot0, balanceSlot], 'latest']],
    ['eth_getProof', [RECIPIENT, [], head.number]],
    ['eth_sendTransaction', [{ from: node, to: RECIPIENT, value: '0x1' }]],
    ['eth_sendRawTransaction', [signed]],
    ['eth_getTransactionByHash', [typed2.transactionHash]],
    ['eth_getTransactionByHash', [typed1.transactionHash]],
    ['eth_getTransactionByHash', [legacy.transactionHash]],
    ['eth_getTransactionByHash', [`0x${'cd'.repeat(32)}`]],
    ['eth_getTransactionByBlockHashAndIndex', [typed2.blockHash, typed2.transactionIndex]],
    ['eth_getTransactionByBlockNumberAndIndex', [legacy.blockNumber, legacy.transactionIndex]],
    ['eth_getTransactionReceipt', [deployed.transactionHash]],
    ['eth_getTransactionReceipt', [typed1.transactionHash]],
    ['eth_getTransactionReceipt', [legacy.transactionHash]],
    ['eth_fillTransaction', [{ from: EWOQ_EVM_ADDRESS, to: RECIPIENT, value: '0x1' }]],
  ];
  for (const [method, params] of calls) out.push({ method, params, reply: await t.call(method, params) });
  return out;
}

interface Verdict {
  readonly unserved: string[];
  /** "method(params): what is wrong" for each error reply other than -32601 and each result the schema refuses. */
  readonly failures: string[];
}

function judge(outcomes: readonly Outcome[]): Verdict {
  const unserved = new Set<string>();
  const failures: string[] = [];
  for (const o of outcomes) {
    const at = `${o.method}(${JSON.stringify(o.params).slice(1, -1).slice(0, 120)})`;
    if (o.reply.error) {
      if (o.reply.error.code === -32601) unserved.add(o.method);
      else failures.push(`${at}: error ${JSON.stringify(o.reply.error)}`);
      continue;
    }
    const validate = validators.get(o.method)!;
    if (!validate(o.reply.result)) {
      const errs = (validate.errors ?? []).slice(0, 6).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
      failures.push(`${at}: ${errs.join('; ')}`);
    }
  }
  return { unserved: [...unserved].sort(), failures };
}

function covered(outcomes: readonly Outcome[]): void {
  const called = new Set(outcomes.map((o) => o.method));
  const missing = methods.filter((m) => !called.has(m.name)).map((m) => m.name);
  assert.equal(missing, [], 'every method of the spec is called');
}

const onCornice = suite('execution-apis: cornice');
let cornice: Target | undefined;
let dir: string;
let corniceOutcomes: Outcome[] = [];

onCornice.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-execution-apis-'));
    cornice = await startCornice(dir);
    corniceOutcomes = await exercise(cornice);
  }),
);
onCornice.after(async () => {
  await cornice?.stop();
  await rm(dir, { recursive: true, force: true });
});

onCornice('the fixture holds the spec eth_ methods, each with a compiled result schema', () => {
  assert.ok(methods.length >= 43, `${methods.length} methods`);
  for (const m of methods) assert.ok(validators.has(m.name), m.name);
});

onCornice('every spec method is called', () => covered(corniceOutcomes));

onCornice('every result is valid against the spec; only the documented methods are unserved', () => {
  const v = judge(corniceOutcomes);
  assert.equal(v.failures, [], v.failures.join('\n'));
  assert.equal(v.unserved, Object.keys(CORNICE_UNSERVED).sort());
  for (const o of corniceOutcomes.filter((x) => x.reply.error?.code === -32601)) {
    assert.ok(o.reply.error!.message.startsWith(`the method ${o.method} is not available: `), `${o.method} says why: ${o.reply.error!.message}`);
  }
});

const onAnvil = suite('execution-apis: anvil (the same calls, the same validator)');
let anvil: Target | undefined;
let anvilOutcomes: Outcome[] = [];

onAnvil.before(
  setupReporting(async () => {
    anvil = await startAnvil();
    anvilOutcomes = await exercise(anvil);
  }),
);
onAnvil.after(async () => {
  await anvil?.stop();
});

onAnvil('every spec method is called', () => covered(anvilOutcomes));

onAnvil("anvil's results pass the same validator", () => {
  const v = judge(anvilOutcomes);
  const failing = [...new Set(v.failures.map((f) => f.slice(0, f.indexOf('('))))].sort();
  assert.equal(failing, Object.keys(ANVIL_DEVIATIONS).sort(), v.failures.join('\n'));
});

onCornice.run();
onAnvil.run();
