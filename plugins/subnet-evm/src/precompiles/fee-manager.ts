/**
 * feeManagerConfig at 0x0200…03 (A.3, A.5): setFeeConfig / getFeeConfig / getFeeConfigLastChangedAt,
 * FeeConfigChanged from Durango. Storage: field i (1 = gasLimit … 8 = blockGasCostStep) at the slot
 * whose first byte is i, the last-changed block number at `lca` (0x6c6361…). `readFeeConfig` /
 * `readLastChangedAt` serve the fee rules while the precompile is active.
 */
import type { HookState } from '@cornice/evm';
import { fromHex } from '@cornice/sdk';
import { ConfigError, FEE_CONFIG_FIELDS, type FeeConfig, type PrecompileModule } from '../types.js';
import { addressWord, eventTopic, readWords, uint256Word, wordToBigint, WORD_BYTES } from './abi.js';
import { allowListModule, requireEnabledCaller, type AllowListModuleConfig } from './allow-list.js';
import { LOG_DATA_GAS, LOG_GAS, LOG_TOPIC_GAS, READ_GAS_PER_SLOT, requireStrictLength, requireWritable, WRITE_GAS_PER_SLOT } from './contract.js';
import { PrecompileHalt } from './errors.js';
import { feeConfigJson, feeConfigProblem, parseFeeConfig, type FeeConfigVerifier } from '../config/fee-config.js';
import { MAX_UINT64 } from '../config/json.js';

export const FEE_MANAGER_ADDRESS = fromHex('0x0200000000000000000000000000000000000003');

const FIELD_COUNT = BigInt(FEE_CONFIG_FIELDS.length);
/** One write per field plus the last-changed block. */
export const SET_FEE_CONFIG_GAS = WRITE_GAS_PER_SLOT * (FIELD_COUNT + 1n);
export const GET_FEE_CONFIG_GAS = READ_GAS_PER_SLOT * FIELD_COUNT;
export const GET_LAST_CHANGED_AT_GAS = READ_GAS_PER_SLOT;
/** FeeConfigChanged: reading the old config, 2 topics, two 8-word configs of data. */
export const FEE_CONFIG_CHANGED_EVENT_GAS = READ_GAS_PER_SLOT * FIELD_COUNT + LOG_GAS + 2n * LOG_TOPIC_GAS + 2n * 256n * LOG_DATA_GAS;
const FEE_CONFIG_TUPLE = '(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)';
export const FEE_CONFIG_CHANGED_TOPIC = eventTopic(`FeeConfigChanged(address,${FEE_CONFIG_TUPLE},${FEE_CONFIG_TUPLE})`);

/** The slot of fee config field `i` (1-based): its first byte is i. */
export function feeConfigSlot(i: number): Uint8Array {
  const slot = new Uint8Array(WORD_BYTES);
  slot[0] = i;
  return slot;
}

/** `Hash{'l','c','a'}`: the block number of the last change. */
export const LAST_CHANGED_AT_SLOT = (() => {
  const slot = new Uint8Array(WORD_BYTES);
  slot.set([0x6c, 0x63, 0x61]);
  return slot;
})();

export interface FeeManagerConfig extends AllowListModuleConfig {
  /** Stored on activation; the chain's genesis fee config when absent. */
  readonly initialFeeConfig?: FeeConfig;
}

/** The fee config in the fee manager's storage (GetStoredFeeConfig; targetBlockRate as its low 64 bits). */
export async function readFeeConfig(state: Pick<HookState, 'getStorage'>): Promise<FeeConfig> {
  const values: Partial<Record<keyof FeeConfig, bigint>> = {};
  for (const [i, name] of FEE_CONFIG_FIELDS.entries()) {
    const v = wordToBigint(await state.getStorage(FEE_MANAGER_ADDRESS, feeConfigSlot(i + 1)));
    values[name] = name === 'targetBlockRate' ? v & MAX_UINT64 : v;
  }
  return values as FeeConfig;
}

/** The block number of the last fee config change (0 when never set). */
export async function readLastChangedAt(state: Pick<HookState, 'getStorage'>): Promise<bigint> {
  return wordToBigint(await state.getStorage(FEE_MANAGER_ADDRESS, LAST_CHANGED_AT_SLOT));
}

/** StoreFeeConfig: verifies, then writes the fields and the block number. Returns why it refused, or undefined. */
async function storeFeeConfig(state: HookState, config: FeeConfig, blockNumber: bigint, verify: FeeConfigVerifier): Promise<string | undefined> {
  const why = verify(config);
  if (why) return `cannot verify fee config: ${why}`;
  for (const [i, name] of FEE_CONFIG_FIELDS.entries()) await state.putStorage(FEE_MANAGER_ADDRESS, feeConfigSlot(i + 1), uint256Word(config[name]));
  await state.putStorage(FEE_MANAGER_ADDRESS, LAST_CHANGED_AT_SLOT, uint256Word(blockNumber));
  return undefined;
}

function feeConfigWords(config: FeeConfig): Uint8Array[] {
  return FEE_CONFIG_FIELDS.map((name) => uint256Word(config[name]));
}

function concatWords(words: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(words.length * WORD_BYTES);
  words.forEach((w, i) => out.set(w, i * WORD_BYTES));
  return out;
}

export interface FeeManagerOptions {
  /** Rules on top of FeeConfig.Verify, for setFeeConfig and initialFeeConfig (default: none). */
  readonly verify?: FeeConfigVerifier;
}

/** The fee manager module (`feeManager` is it without extra rules). */
export function createFeeManager(options: FeeManagerOptions = {}): PrecompileModule<FeeManagerConfig> {
  const extra = options.verify;
  const verify: FeeConfigVerifier = (c) => feeConfigProblem(c) ?? extra?.(c);
  return allowListModule<FeeManagerConfig>({
    key: 'feeManagerConfig',
    address: FEE_MANAGER_ADDRESS,
    parseExtra(o, field) {
      const initial = o.initialFeeConfig;
      return initial === undefined || initial === null ? {} : { initialFeeConfig: parseFeeConfig(initial, `${field}.initialFeeConfig`, extra) };
    },
    extraJson: (config) => (config.initialFeeConfig ? { initialFeeConfig: feeConfigJson(config.initialFeeConfig) } : {}),
    async configureExtra(state, config, block, chain) {
      const why = await storeFeeConfig(state, config.initialFeeConfig ?? chain.feeConfig, block.number, verify);
      // parseConfig and the chain config parser verified it already: this only fails on a bug.
      if (why) throw new ConfigError(config.initialFeeConfig ? 'feeManagerConfig.initialFeeConfig' : 'config.feeConfig', why);
    },
    functions: [
      {
        signature: 'setFeeConfig(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)',
        async run(env) {
          env.gas.charge(SET_FEE_CONFIG_GAS);
          requireWritable(env);
          requireStrictLength(env, FEE_CONFIG_FIELDS.length * WORD_BYTES, 'invalid input length for fee config Input');
          const words = readWords(env.args, FEE_CONFIG_FIELDS.length);
          const values: Partial<Record<keyof FeeConfig, bigint>> = {};
          for (const [i, name] of FEE_CONFIG_FIELDS.entries()) {
            const v = wordToBigint(words[i]!);
            // The reference keeps targetBlockRate as a uint64: the low 64 bits of the word.
            values[name] = name === 'targetBlockRate' ? v & MAX_UINT64 : v;
          }
          const config = values as FeeConfig;
          await requireEnabledCaller(env, FEE_MANAGER_ADDRESS, 'non-enabled cannot change fee config');
          const { state, caller, block } = env.call;
          if (env.durango) {
            env.gas.charge(FEE_CONFIG_CHANGED_EVENT_GAS);
            const old = await readFeeConfig(state);
            env.emit([FEE_CONFIG_CHANGED_TOPIC, addressWord(caller)], concatWords([...feeConfigWords(old), ...feeConfigWords(config)]));
          }
          const why = await storeFeeConfig(state, config, block.number, verify);
          if (why) throw new PrecompileHalt(why);
          return new Uint8Array(0);
        },
      },
      {
        signature: 'getFeeConfig()',
        async run(env) {
          env.gas.charge(GET_FEE_CONFIG_GAS);
          return concatWords(feeConfigWords(await readFeeConfig(env.call.state)));
        },
      },
      {
        signature: 'getFeeConfigLastChangedAt()',
        async run(env) {
          env.gas.charge(GET_LAST_CHANGED_AT_GAS);
          return uint256Word(await readLastChangedAt(env.call.state));
        },
      },
    ],
  });
}

export const feeManager = createFeeManager();
