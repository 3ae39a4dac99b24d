/**
 * A subnet-EVM chain as a user makes and uses it: a node started as `npm start` does, a subnet this
 * node validates, platform.createBlockchain with the `subnetevm` vmID and a subnet-evm genesis (all
 * five precompiles at genesis, ewoq their admin; the reward manager scheduled by the chain's
 * upgrade.json a few seconds ahead), then ethers v6 unchanged against `/ext/bc/<id>/rpc` with a
 * contract compiled from Solidity source in the test.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Contract, ContractFactory, JsonRpcProvider, Wallet, WebSocketProvider, parseEther, type ContractTransactionReceipt } from 'ethers';
import { vmIdFromName } from '@cornice/sdk';
import { REPO, npmStartFlags } from '../src/fixtures.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';
import { compileSolidity, type CompiledContract } from '../src/solidity.js';
import { openSubnet, until, type Subnet } from '../src/subnet.js';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, setupReporting } from '../src/evm.js';

const SUBNET_EVM = 'srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy';
const DEPLOYER_LIST = '0x0200000000000000000000000000000000000000';
const MINTER = '0x0200000000000000000000000000000000000001';
const FEE_MANAGER = '0x0200000000000000000000000000000000000003';
const REWARD_MANAGER = '0x0200000000000000000000000000000000000004';

const ALLOW_LIST_ABI = [
  'function setAdmin(address)',
  'function setEnabled(address)',
  'function setManager(address)',
  'function setNone(address)',
  'function readAllowList(address) view returns (uint256)',
  'event RoleSet(uint256 indexed role, address indexed account, address indexed sender, uint256 oldRole)',
];
const MINTER_ABI = [...ALLOW_LIST_ABI, 'function mintNativeCoin(address addr, uint256 amount)', 'event NativeCoinMinted(address indexed sender, address indexed recipient, uint256 amount)'];
const FEE_FIELDS = 'uint256 gasLimit, uint256 targetBlockRate, uint256 minBaseFee, uint256 targetGas, uint256 baseFeeChangeDenominator, uint256 minBlockGasCost, uint256 maxBlockGasCost, uint256 blockGasCostStep';
const FEE_MANAGER_ABI = [
  ...ALLOW_LIST_ABI,
  `function setFeeConfig(${FEE_FIELDS})`,
  `function getFeeConfig() view returns (${FEE_FIELDS})`,
  'function getFeeConfigLastChangedAt() view returns (uint256 blockNumber)',
];
const REWARD_MANAGER_ABI = [...ALLOW_LIST_ABI, 'function currentRewardAddress() view returns (address)', 'function areFeeRecipientsAllowed() view returns (bool)'];

/** Fast blocks for a test: no block gas cost; a small gas target so that a burst of transfers raises the base fee. */
const FEE_CONFIG = {
  gasLimit: 8_000_000,
  targetBlockRate: 2,
  minBaseFee: 1_000_000_000,
  targetGas: 200_000,
  baseFeeChangeDenominator: 8,
  minBlockGasCost: 0,
  maxBlockGasCost: 0,
  blockGasCostStep: 0,
};

let dir: string;
let node: NodeProcess;
let subnet: Subnet;
let chainId: string;
let rpcUrl: string;
let provider: JsonRpcProvider;
let ewoq: Wallet;
const alice = Wallet.createRandom();
const outsider = Wallet.createRandom();
let probe: CompiledContract;
let rewardManagerAt: number;
/** The Probe contract alice deploys once the deployer allow list lets her. */
let probeAt: string;

async function rpc(method: string, params: unknown[] = []): Promise<{ result?: any; error?: { code: number; message: string; data?: unknown } }> {
  const r = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await r.json()) as never;
}

const wait = async (tx: { wait(confirms?: number, timeout?: number): Promise<unknown> }) => (await tx.wait(1, 30_000)) as ContractTransactionReceipt;

test.before(
  setupReporting(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-subnet-evm-'));
  probe = compileSolidity('Probe.sol', readFileSync(join(REPO, 'test/fixtures/subnet-evm/Probe.sol'), 'utf8')).Probe!;
  const configDir = join(dir, 'chain-configs');
  // A third party's subnet-EVM with its own precompile (examples/custom-precompile), as a plugin.
  const plugins = join(dir, 'plugins');
  await mkdir(plugins);
  await symlink(join(REPO, 'examples/custom-precompile'), join(plugins, vmIdFromName('helloevm').toString()));
  node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/node`, `--chain-config-dir=${configDir}`, `--plugin-dir=${plugins}`], 60_000);
  subnet = await openSubnet(node);
  const ewoqAddr = EWOQ_EVM_ADDRESS;
  const genesis = {
    config: {
      chainId: 99999,
      feeConfig: FEE_CONFIG,
      subnetEVMTimestamp: 0,
      durangoTimestamp: 0,
      contractDeployerAllowListConfig: { blockTimestamp: 0, adminAddresses: [ewoqAddr] },
      contractNativeMinterConfig: { blockTimestamp: 0, adminAddresses: [ewoqAddr] },
      txAllowListConfig: { blockTimestamp: 0, adminAddresses: [ewoqAddr], enabledAddresses: [alice.address] },
      feeManagerConfig: { blockTimestamp: 0, adminAddresses: [ewoqAddr] },
    },
    alloc: {
      [ewoqAddr]: { balance: '0x52B7D2DCC80CD2E4000000' },
      [alice.address]: { balance: parseEther('100').toString() },
      [outsider.address]: { balance: parseEther('100').toString() },
    },
    // The header fields (nonce, timestamp, extraData, …) take parseGenesis' defaults.
    gasLimit: '0x7A1200',
  };
  // The reward manager comes by upgrade, a few seconds after the chain starts.
  rewardManagerAt = Math.floor(Date.now() / 1000) + 25;
  chainId = await subnet.issueChain(SUBNET_EVM, 'my subnet evm', genesis, async (id) => {
    await mkdir(join(configDir, id), { recursive: true });
    const upgrade = { precompileUpgrades: [{ rewardManagerConfig: { blockTimestamp: rewardManagerAt, adminAddresses: [ewoqAddr] } }] };
    await writeFile(join(configDir, id, 'upgrade.json'), JSON.stringify(upgrade));
  });
  await subnet.untilValidating(chainId).catch((e: Error) => {
    const problems = node.logs.filter((l) => l.level === 'error' || l.level === 'warn').slice(-5);
    throw new Error(`${e.message}; the node logged: ${JSON.stringify(problems)}`);
  });
  rpcUrl = `${node.url}/ext/bc/${chainId}/rpc`;
  await until('the chain RPC', async () => ((await rpc('eth_chainId').catch(() => ({}))) as { result?: string }).result);
  provider = new JsonRpcProvider(rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  ewoq = new Wallet(EWOQ_EVM_KEY, provider);
  }),
);

test.after(async () => {
  provider?.destroy();
  await node?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the chain: its chain ID, the genesis config and upgrades from eth_getChainConfig, the fee config', async () => {
  assert.is((await provider.getNetwork()).chainId, 99999n);
  const cfg = (await rpc('eth_getChainConfig')).result;
  assert.is(cfg.chainId, 99999);
  assert.equal(cfg.feeConfig, FEE_CONFIG);
  assert.equal(cfg.contractNativeMinterConfig.adminAddresses.map((a: string) => a.toLowerCase()), [EWOQ_EVM_ADDRESS.toLowerCase()]);
  assert.is(cfg.upgrades.precompileUpgrades[0].rewardManagerConfig.blockTimestamp, rewardManagerAt);
  const fee = (await rpc('eth_feeConfig')).result;
  assert.equal(fee, { feeConfig: FEE_CONFIG, lastChangedAt: 0 });
});

test('the chain also serves /ws: chain ID and a newHeads subscription seeing the next block', async () => {
  const ws = new WebSocketProvider(rpcUrl.replace(/^http/, 'ws').replace(/\/rpc$/, '/ws'));
  try {
    assert.is((await ws.getNetwork()).chainId, 99999n);
    const blocks: number[] = [];
    let wake: () => void = () => {};
    await ws.on('block', (n: number) => {
      blocks.push(n);
      wake();
    });
    // Requests on one socket are handled in order: once this answers, the subscription is in place.
    await ws.send('eth_blockNumber', []);
    const r = await wait(await ewoq.sendTransaction({ to: alice.address, value: 1n }));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no newHeads for block ${r.blockNumber} within 15 s (saw ${blocks})`)), 15_000);
      wake = () => {
        if (blocks.includes(r.blockNumber)) {
          clearTimeout(timer);
          resolve();
        }
      };
      wake();
    });
  } finally {
    await ws.destroy();
  }
});

test('tx allow list: a sender not on it is refused with the reference error; an enabled one sends', async () => {
  const refused = await rpc('eth_sendRawTransaction', [
    await outsider.signTransaction({ to: alice.address, value: 1n, nonce: 0, gasLimit: 21_000, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 0n, chainId: 99999n, type: 2 }),
  ]);
  assert.is(refused.error?.code, -32000);
  assert.is(refused.error?.message, `cannot issue transaction from non-allow listed address: ${outsider.address}`);
  assert.is(await provider.getBalance(outsider.address), parseEther('100'), 'nothing spent');
  const sent = await wait(await alice.connect(provider).sendTransaction({ to: outsider.address, value: 1n }));
  assert.is(sent.status, 1);
});

test('deployer allow list: a non-enabled deployer gets the reference error; the admin enables it; then it deploys', async () => {
  const aliceW = alice.connect(provider);
  const factory = new ContractFactory(probe.abi, probe.bytecode, aliceW);
  const err = await factory.deploy().then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err, 'the deployment is refused');
  // ethers reports a non-revert failure of eth_estimateGas as CALL_EXCEPTION, the node's text inside.
  const nodeText = (err as Error & { info?: { error?: { message?: string } } }).info?.error?.message ?? err!.message;
  assert.match(nodeText, new RegExp(`tx.origin ${alice.address} is not authorized to deploy a contract`, 'i'));
  const list = new Contract(DEPLOYER_LIST, ALLOW_LIST_ABI, ewoq);
  assert.is(await list.readAllowList!(alice.address), 0n);
  const r = await wait(await list.setEnabled!(alice.address));
  assert.is(r.status, 1);
  assert.is(await list.readAllowList!(alice.address), 1n);
  const roleSet = r.logs.map((l) => list.interface.parseLog(l)).find((l) => l?.name === 'RoleSet');
  assert.ok(roleSet, 'RoleSet event');
  const deployed = await factory.deploy();
  await deployed.waitForDeployment();
  probeAt = await deployed.getAddress();
  assert.ok((await provider.getCode(probeAt)).length > 2);
});

test('native minter: the admin mints; balance and NativeCoinMinted show it; a non-enabled caller is refused; a static call cannot mint', async () => {
  const minter = new Contract(MINTER, MINTER_ABI, ewoq);
  const to = Wallet.createRandom().address;
  const r = await wait(await minter.mintNativeCoin!(to, 12345n));
  assert.is(r.status, 1);
  assert.is(await provider.getBalance(to), 12345n);
  const ev = r.logs.map((l) => minter.interface.parseLog(l)).find((l) => l?.name === 'NativeCoinMinted');
  assert.ok(ev);
  assert.is(ev!.args.sender, EWOQ_EVM_ADDRESS);
  assert.is(ev!.args.recipient, to);
  assert.is(ev!.args.amount, 12345n);
  // A caller without a role: the reference's text, nothing minted.
  const call = await rpc('eth_call', [{ from: alice.address, to: MINTER, data: minter.interface.encodeFunctionData('mintNativeCoin', [to, 1n]) }, 'latest']);
  assert.ok(call.error, 'refused');
  assert.match(call.error!.message, new RegExp(`non-enabled cannot mint: ${alice.address}`, 'i'));
  // Bad input: too short for a selector.
  const short = await rpc('eth_call', [{ from: EWOQ_EVM_ADDRESS, to: MINTER, data: '0x4f5a' }, 'latest']);
  assert.ok(short.error, 'short input refused');
  assert.is(await provider.getBalance(to), 12345n, 'nothing stored by the refusals');
  // From a contract: once enabled it mints; a static call of the same write fails (write protection).
  const probeContract = new Contract(probeAt, probe.abi, alice.connect(provider));
  await wait(await minter.setEnabled!(probeAt));
  assert.is(await probeContract.staticMint!(MINTER, to), false, 'a static call cannot mint');
  const minted = await wait(await probeContract.mint!(MINTER, to, 5n));
  assert.is(minted.status, 1);
  assert.is(await provider.getBalance(to), 12350n);
});

test('fee manager: setFeeConfig changes the config; eth_feeConfig and getFeeConfigLastChangedAt report it and its block', async () => {
  const fm = new Contract(FEE_MANAGER, FEE_MANAGER_ABI, ewoq);
  const next = { ...FEE_CONFIG, targetGas: 300_000, minBaseFee: 2_000_000_000 };
  const r = await wait(await fm.setFeeConfig!(...Object.values(next)));
  assert.is(r.status, 1);
  const fee = (await rpc('eth_feeConfig')).result;
  assert.equal(fee, { feeConfig: next, lastChangedAt: r.blockNumber });
  assert.is(await fm.getFeeConfigLastChangedAt!(), BigInt(r.blockNumber));
  const got = await fm.getFeeConfig!();
  assert.is(got.targetGas, 300_000n);
  // An invalid config is refused (FeeConfig.Verify), nothing changes.
  const bad = await rpc('eth_call', [{ from: EWOQ_EVM_ADDRESS, to: FEE_MANAGER, data: fm.interface.encodeFunctionData('setFeeConfig', Object.values({ ...next, gasLimit: 0 })) }, 'latest']);
  assert.ok(bad.error);
  assert.equal((await rpc('eth_feeConfig')).result, fee);
  // Back to the test config (later tests count on it).
  await wait(await fm.setFeeConfig!(...Object.values(FEE_CONFIG)));
});

test('base fee rises under load and falls back toward minBaseFee when idle', async () => {
  const start = (await provider.getBlock('latest'))!.baseFeePerGas!;
  const nonce = await provider.getTransactionCount(EWOQ_EVM_ADDRESS, 'pending');
  const sends = [];
  for (let i = 0; i < 30; i++) sends.push(ewoq.sendTransaction({ to: alice.address, value: 1n, nonce: nonce + i, gasLimit: 21_000, maxFeePerGas: 10n ** 12n, maxPriorityFeePerGas: 0n }));
  const txs = await Promise.all(sends);
  await wait(txs.at(-1)!);
  const peak = (await provider.getBlock('latest'))!.baseFeePerGas!;
  assert.ok(peak > start, `base fee rose under load: ${start} -> ${peak}`);
  // Idle for more than the 10 s window: the next block's base fee is lower.
  await new Promise((r) => setTimeout(r, 12_000));
  const after = await wait(await ewoq.sendTransaction({ to: alice.address, value: 1n }));
  const fee = (await provider.getBlock(after.blockNumber))!.baseFeePerGas!;
  assert.ok(fee < peak && fee >= BigInt(FEE_CONFIG.minBaseFee), `base fee fell back when idle: ${peak} -> ${fee}`);
});

test('an upgrade activates the reward manager at its timestamp: eth_getActivePrecompilesAt before and after; callable after', async () => {
  const before = (await rpc('eth_getActivePrecompilesAt', [rewardManagerAt - 1])).result;
  const after = (await rpc('eth_getActivePrecompilesAt', [rewardManagerAt])).result;
  assert.not.ok('rewardManagerConfig' in before);
  assert.ok('rewardManagerConfig' in after);
  assert.ok('feeManagerConfig' in before && 'feeManagerConfig' in after);
  const rules = (await rpc('eth_getActiveRulesAt', [rewardManagerAt])).result;
  assert.is(rules.IsSubnetEVM, true);
  assert.ok(rules.ActivePrecompiles[REWARD_MANAGER], 'active rules name the reward manager by address');
  // Wait for its time, then a block crosses it.
  await until('the upgrade time', async () => (Date.now() / 1000 > rewardManagerAt + 1 ? true : undefined), 60_000);
  await wait(await ewoq.sendTransaction({ to: alice.address, value: 1n }));
  const rm = new Contract(REWARD_MANAGER, REWARD_MANAGER_ABI, provider);
  assert.is(await rm.readAllowList!(EWOQ_EVM_ADDRESS), 2n, 'configured at activation: ewoq is admin');
  assert.is(await provider.getTransactionCount(REWARD_MANAGER), 1, 'nonce 1 at activation');
  assert.is(await provider.getCode(REWARD_MANAGER), '0x01');
});

test('the subnet-EVM vmID refuses an invalid chain config at createBlockchain, naming the field', async () => {
  const bad = { config: { chainId: 5, feeConfig: { ...FEE_CONFIG, gasLimit: 0 } }, alloc: {} };
  const err = await subnet.issueChain(SUBNET_EVM, 'bad', bad).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err);
  assert.match(err!.message, /genesisData: not valid genesis data for this VM: .*feeConfig\.gasLimit/);
  const unknownKey = { config: { chainId: 5, noSuchPrecompileConfig: { blockTimestamp: 0 } }, alloc: {} };
  const err2 = await subnet.issueChain(SUBNET_EVM, 'bad', unknownKey).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.match(err2!.message, /noSuchPrecompileConfig/);
});

test("a third party's precompile: its plugin's VM (helloevm, from --plugin-dir) serves it; the stock subnet-EVM does not know its key", async () => {
  const genesis = {
    config: { chainId: 77777, feeConfig: FEE_CONFIG, helloWorldConfig: { blockTimestamp: 0, adminAddresses: [EWOQ_EVM_ADDRESS], initialCount: 41 } },
    alloc: { [EWOQ_EVM_ADDRESS]: { balance: '0x52B7D2DCC80CD2E4000000' } },
  };
  const refused = await subnet.issueChain(SUBNET_EVM, 'no hello', genesis).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.match(refused!.message, /helloWorldConfig/);
  const hello = await subnet.issueChain('helloevm', 'hello', genesis);
  await subnet.untilValidating(hello);
  const url = `${node.url}/ext/bc/${hello}/rpc`;
  const p = new JsonRpcProvider(url, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  try {
    await until('the hello chain RPC', () => p.getBlockNumber().then(() => true, () => undefined));
    const counter = new Contract('0x0300000000000000000000000000000000000000', ['function increment()', 'function getCounter() view returns (uint256)', 'event Incremented(address indexed sender, uint256 value)'], new Wallet(EWOQ_EVM_KEY, p));
    assert.is(await counter.getCounter!(), 41n);
    const r = await wait(await counter.increment!());
    assert.is(r.status, 1);
    assert.is(await counter.getCounter!(), 42n);
    const ev = r.logs.map((l) => counter.interface.parseLog(l)).find((l) => l?.name === 'Incremented');
    assert.is(ev?.args.value, 42n);
  } finally {
    p.destroy();
  }
});

test('a bad upgrade.json (upgrades out of order): the chain does not start and health names it and the field; the node serves on', async () => {
  const genesis = { config: { chainId: 55555, feeConfig: FEE_CONFIG }, alloc: {} };
  const bad = await subnet.issueChain(SUBNET_EVM, 'bad upgrades', genesis, async (id) => {
    await mkdir(join(dir, 'chain-configs', id), { recursive: true });
    const upgrade = {
      precompileUpgrades: [
        { txAllowListConfig: { blockTimestamp: 2_000_000_000, adminAddresses: [EWOQ_EVM_ADDRESS] } },
        { contractNativeMinterConfig: { blockTimestamp: 1_900_000_000, adminAddresses: [EWOQ_EVM_ADDRESS] } },
      ],
    };
    await writeFile(join(dir, 'chain-configs', id, 'upgrade.json'), JSON.stringify(upgrade));
  });
  const message = await until('the chains health check to name the chain', async () => {
    const r = await node.call('health', 'health.getLiveness', {});
    const m: string | undefined = (r.result as any)?.checks?.chains?.error?.message;
    return m?.includes(bad) ? m : undefined;
  });
  assert.match(message, /precompileUpgrades\[1\]\.contractNativeMinterConfig\.blockTimestamp/);
  assert.ok((await rpc('eth_chainId')).result, 'the other subnet-EVM chain still serves');
});

test.run();
