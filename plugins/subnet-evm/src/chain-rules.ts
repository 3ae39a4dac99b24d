/**
 * The subnet-EVM as @cornice/evm chain rules (ChainRules): the fee config in effect (the genesis
 * one, or the fee manager's storage once it is active), the fee window and block gas cost in
 * extraData, the fee recipient (burned unless allowed, or the reward manager's), the precompile
 * schedule applied at each block (enable: nonce 1, code 0x01, configure; disable: wipe), the tx and
 * deployer allow lists, and the stateful precompiles themselves.
 */
import { BLACKHOLE_ADDRESS, type BlockInfo, type ChainRules, type HookState, type ParentHeader, type StatefulPrecompile } from '@cornice/evm';
import { bytesEqual, toHex } from '@cornice/sdk';
import { parseChainConfig, type SubnetChainConfig } from './config/chain-config.js';
import { PrecompileSchedule } from './config/schedule.js';
import { parseUpgradeConfig, type UpgradeConfig } from './config/upgrades.js';
import { isForked } from './config/network-upgrades.js';
import { buildableAt, verifyBlockFee } from './fees/block-gas-cost.js';
import { EXTRA_DATA_BYTES, decodeExtraData } from './fees/extra-data.js';
import { nextFeeFields, parentFeeState } from './fees/header.js';
import { checksumAddress } from './precompiles/abi.js';
import { checkDeploy } from './precompiles/deployer-allow-list.js';
import { readFeeConfig } from './precompiles/fee-manager.js';
import { precompileModules } from './precompiles/registry.js';
import { readRewardConfig } from './precompiles/reward-manager.js';
import { checkTransact } from './precompiles/tx-allow-list.js';
import type { FeeConfig, PrecompileModule } from './types.js';

const FEE_MANAGER = 'feeManagerConfig';
const REWARD_MANAGER = 'rewardManagerConfig';
const TX_ALLOW_LIST = 'txAllowListConfig';
const DEPLOYER_ALLOW_LIST = 'contractDeployerAllowListConfig';
const PRECOMPILE_CODE = Uint8Array.of(1);

/** A subnet-EVM chain's parsed configuration: what the rules and the extra RPC methods share. */
export interface SubnetChain {
  readonly config: SubnetChainConfig;
  readonly upgrades: UpgradeConfig;
  readonly schedule: PrecompileSchedule;
  /** The fee config for a block on a parent at `parentTimestamp` whose state is `state` (GetFeeConfigAt). */
  feeConfigAt(state: Pick<HookState, 'getStorage'>, parentTimestamp: bigint): Promise<FeeConfig>;
}

/** Parses a chain's genesis config and upgrade.json (ConfigError naming the field when invalid). */
export function subnetChain(genesisConfig: Readonly<Record<string, unknown>>, upgrade: Uint8Array, modules: readonly PrecompileModule[] = precompileModules()): SubnetChain {
  const config = parseChainConfig(genesisConfig, modules);
  const upgrades = parseUpgradeConfig(upgrade, config);
  const schedule = new PrecompileSchedule(config, upgrades);
  return {
    config,
    upgrades,
    schedule,
    async feeConfigAt(state, parentTimestamp) {
      return schedule.activeConfig(FEE_MANAGER, parentTimestamp) ? readFeeConfig(state) : config.feeConfig;
    },
  };
}

export interface SubnetRulesOptions {
  /** This node's fee recipient when fee recipients are allowed (default: the black-hole address). */
  readonly feeRecipient?: Uint8Array;
}

/** The ChainRules of a subnet-EVM chain. */
export function subnetRules(chain: SubnetChain, o: SubnetRulesOptions = {}): ChainRules {
  const { config, schedule } = chain;
  const feeRecipient = o.feeRecipient ?? BLACKHOLE_ADDRESS;

  /** The required coinbase of a block on a parent at `parentTimestamp` (undefined: any, fee recipients allowed). */
  const requiredCoinbase = async (state: HookState, parentTimestamp: bigint): Promise<Uint8Array | undefined> => {
    if (schedule.activeConfig(REWARD_MANAGER, parentTimestamp)) {
      const reward = await readRewardConfig(state);
      if (reward.kind === 'allowFeeRecipients') return undefined;
      return reward.kind === 'address' ? reward.address : BLACKHOLE_ADDRESS;
    }
    return config.allowFeeRecipients ? undefined : BLACKHOLE_ADDRESS;
  };

  const header = async (parent: ParentHeader, timestamp: bigint, state: HookState) => {
    const cfg = await chain.feeConfigAt(state, parent.timestamp);
    const f = nextFeeFields(cfg, parent, timestamp, config.upgrades);
    const coinbase = (await requiredCoinbase(state, parent.timestamp)) ?? feeRecipient;
    return { baseFeePerGas: f.baseFee, gasLimit: f.gasLimit, coinbase, extraData: f.extraData };
  };

  const allowList = new TxAllowListMemo();
  const precompiles: StatefulPrecompile[] = [...config.modules.values()].map((module) => ({
    address: module.address,
    isActive: (timestamp: bigint) => schedule.activeConfig(module.key, timestamp) !== undefined,
    run: (call) => {
      allowList.stateMayChange();
      return module.run(call, { config: schedule.activeConfig(module.key, call.block.timestamp)!, chain: config });
    },
  }));

  return {
    header,
    async verifyHeader(parent, timestamp, got, state) {
      const want = await header(parent, timestamp, state);
      if (got.gasLimit !== want.gasLimit) return `invalid gas limit: have ${got.gasLimit}, want ${want.gasLimit}`;
      if (got.baseFeePerGas !== want.baseFeePerGas) return `invalid base fee: have ${got.baseFeePerGas}, want ${want.baseFeePerGas}`;
      if (!bytesEqual(got.extraData, want.extraData)) return 'invalid extra data: the fee window or block gas cost does not follow the fee config';
      const required = await requiredCoinbase(state, parent.timestamp);
      return required === undefined ? undefined : coinbaseMismatch(got.coinbase, required);
    },
    maxExtraDataBytes: EXTRA_DATA_BYTES,
    async beforeBlock(block: BlockInfo, state: HookState) {
      for (const t of schedule.transitions(block.parentTimestamp, block.timestamp)) {
        allowList.stateMayChange();
        const address = t.module.address;
        if (t.config.disable) {
          await state.deleteAccount(address);
          continue;
        }
        const account = await state.getAccount(address);
        await state.putAccount(address, { nonce: 1n, balance: account?.balance ?? 0n });
        await state.putCode(address, PRECOMPILE_CODE);
        await t.module.configure(state, t.config, block, config);
      }
    },
    async checkTx(sender, block, state) {
      return schedule.activeConfig(TX_ALLOW_LIST, block.timestamp) ? allowList.check(sender, block, state) : undefined;
    },
    async canCreate(origin, block, state) {
      return schedule.activeConfig(DEPLOYER_ALLOW_LIST, block.timestamp) ? checkDeploy(state, origin) : undefined;
    },
    precompiles,
    verifyBlockFee(h, txs) {
      if (h.number === 0n) return undefined;
      return verifyBlockFee(h.baseFeePerGas, decodeExtraData(h.extraData).blockGasCost, txs);
    },
    async buildableAt(parent, state) {
      const cfg = await chain.feeConfigAt(state, parent.timestamp);
      const parentCost = parentFeeState(parent, config.upgrades).blockGasCost;
      return buildableAt(parent.timestamp, parentCost, cfg, isForked(config.upgrades.graniteTimestamp, parent.timestamp));
    },
    creditBaseFee: true,
    headerJson(h) {
      if (h.number === 0n || h.extraData.length !== EXTRA_DATA_BYTES) return {};
      return { blockGasCost: `0x${decodeExtraData(h.extraData).blockGasCost.toString(16)}` };
    },
  };
}

/** Senders whose answers one accepted root or one block keeps. */
const MAX_ANSWERS = 4096;

/**
 * The tx allow list's answers, which every tx asks at admission and again in its block. Roles live in
 * the precompile's storage, which only a precompile run or a schedule transition (beforeBlock)
 * writes; so answers are kept per accepted root (admission: `state.root`) and, within a block being
 * built or replayed (one BlockInfo), until a precompile runs — a conservative reset, as a run that
 * is reverted may have changed nothing.
 */
class TxAllowListMemo {
  #generation = 0;
  #root: { root: Uint8Array; answers: Map<string, string | undefined> } = { root: new Uint8Array(), answers: new Map() };
  readonly #blocks = new WeakMap<BlockInfo, { generation: number; answers: Map<string, string | undefined> }>();

  stateMayChange(): void {
    this.#generation++;
  }

  async check(sender: Uint8Array, block: BlockInfo, state: HookState): Promise<string | undefined> {
    const answers = this.#answers(block, state);
    const key = toHex(sender);
    if (answers.has(key)) return answers.get(key);
    const refused = await checkTransact(state, sender);
    // Bounded: refused senders add answers without moving the root (a spam of fresh keys).
    if (answers.size >= MAX_ANSWERS) answers.clear();
    answers.set(key, refused);
    return refused;
  }

  #answers(block: BlockInfo, state: HookState): Map<string, string | undefined> {
    if (state.root) {
      if (state.root !== this.#root.root && !bytesEqual(state.root, this.#root.root)) this.#root = { root: state.root, answers: new Map() };
      return this.#root.answers;
    }
    let memo = this.#blocks.get(block);
    if (!memo || memo.generation !== this.#generation) this.#blocks.set(block, (memo = { generation: this.#generation, answers: new Map() }));
    return memo.answers;
  }
}

/** The coinbase check's text (consensus/dummy verifyCoinbase). */
export function coinbaseMismatch(got: Uint8Array, want: Uint8Array): string | undefined {
  return bytesEqual(got, want) ? undefined : `invalid coinbase: ${checksumAddress(got)} does not match required coinbase address ${checksumAddress(want)}`;
}
