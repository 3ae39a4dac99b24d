/**
 * rewardManagerConfig at 0x0200…04 (A.3, A.5): who receives block fees. One slot, `rask`
 * (0x7261736b…): `afrav` (0x6166726176…) = fee recipients allowed (the block producer chooses),
 * the black-hole address = rewards disabled (burned), any other value = that reward address.
 * `readRewardConfig` serves the coinbase rule while the precompile is active.
 */
import { BLACKHOLE_ADDRESS, type HookState } from '@cornice/evm';
import { bytesEqual, fromHex } from '@cornice/sdk';
import { ConfigError, type PrecompileModule } from '../types.js';
import { addressWord, boolWord, eventTopic, leftPad32, readWords, wordToAddress, WORD_BYTES } from './abi.js';
import { allowListModule, requireEnabledCaller, type AllowListModuleConfig } from './allow-list.js';
import { addressJson, objectAt, parseAddressJson, parseBool } from './config.js';
import {
  LOG_GAS,
  LOG_TOPIC_GAS,
  READ_GAS_PER_SLOT,
  requireWritable,
  WRITE_GAS_PER_SLOT,
  type PrecompileEnv,
  type PrecompileFunction,
} from './contract.js';
import { PrecompileHalt } from './errors.js';

export const REWARD_MANAGER_ADDRESS = fromHex('0x0200000000000000000000000000000000000004');

/** Write one slot + read the allow list. */
export const REWARD_SETTER_GAS = WRITE_GAS_PER_SLOT + READ_GAS_PER_SLOT;
export const REWARD_GETTER_GAS = READ_GAS_PER_SLOT;
/** RewardAddressChanged: 4 topics and reading the old address. */
export const REWARD_ADDRESS_CHANGED_EVENT_GAS = LOG_GAS + 4n * LOG_TOPIC_GAS + READ_GAS_PER_SLOT;
/** FeeRecipientsAllowed / RewardsDisabled: 2 topics. */
export const FEE_RECIPIENTS_ALLOWED_EVENT_GAS = LOG_GAS + 2n * LOG_TOPIC_GAS;
export const REWARDS_DISABLED_EVENT_GAS = LOG_GAS + 2n * LOG_TOPIC_GAS;

export const REWARD_ADDRESS_CHANGED_TOPIC = eventTopic('RewardAddressChanged(address,address,address)');
export const FEE_RECIPIENTS_ALLOWED_TOPIC = eventTopic('FeeRecipientsAllowed(address)');
export const REWARDS_DISABLED_TOPIC = eventTopic('RewardsDisabled(address)');

/** `Hash{'r','a','s','k'}`. */
export const REWARD_ADDRESS_SLOT = hashOfChars('rask');
/** `Hash{'a','f','r','a','v'}`: fee recipients allowed. */
export const ALLOW_FEE_RECIPIENTS_VALUE = hashOfChars('afrav');

function hashOfChars(chars: string): Uint8Array {
  const out = new Uint8Array(WORD_BYTES);
  for (let i = 0; i < chars.length; i++) out[i] = chars.charCodeAt(i);
  return out;
}

export type RewardConfig =
  | { readonly kind: 'burn' }
  | { readonly kind: 'allowFeeRecipients' }
  | { readonly kind: 'address'; readonly address: Uint8Array };

/** initialRewardConfig: fee recipients allowed, or a reward address, or (neither) rewards disabled. */
export interface InitialRewardConfig {
  readonly allowFeeRecipients: boolean;
  /** Absent or zero: none. */
  readonly rewardAddress?: Uint8Array;
}

export interface RewardManagerConfig extends AllowListModuleConfig {
  readonly initialRewardConfig?: InitialRewardConfig;
}

const ZERO_ADDRESS = new Uint8Array(20);

/** What the reward slot says (GetStoredRewardAddress). An unset slot reads as the zero address. */
export async function readRewardConfig(state: HookState): Promise<RewardConfig> {
  const value = await state.getStorage(REWARD_MANAGER_ADDRESS, REWARD_ADDRESS_SLOT);
  if (bytesEqual(value, ALLOW_FEE_RECIPIENTS_VALUE)) return { kind: 'allowFeeRecipients' };
  const address = wordToAddress(value);
  if (bytesEqual(address, BLACKHOLE_ADDRESS)) return { kind: 'burn' };
  return { kind: 'address', address };
}

const storeValue = (state: HookState, value: Uint8Array) => state.putStorage(REWARD_MANAGER_ADDRESS, REWARD_ADDRESS_SLOT, value);

function parseInitialRewardConfig(json: unknown, field: string): InitialRewardConfig {
  const o = objectAt(json, field);
  const allowFeeRecipients = o.allowFeeRecipients === undefined || o.allowFeeRecipients === null ? false : parseBool(o.allowFeeRecipients, `${field}.allowFeeRecipients`);
  const rewardAddress = o.rewardAddress === undefined || o.rewardAddress === null ? undefined : parseAddressJson(o.rewardAddress, `${field}.rewardAddress`);
  if (allowFeeRecipients && rewardAddress && !bytesEqual(rewardAddress, ZERO_ADDRESS)) {
    throw new ConfigError(field, 'cannot enable both fee recipients and reward address at the same time');
  }
  return { allowFeeRecipients, ...(rewardAddress ? { rewardAddress } : {}) };
}

/**
 * A setter: gas, static-call check, its argument (`parse`, before the role check as the reference),
 * the caller's role (with the setter's own text), then `apply`.
 */
function rewardSetter<A>(
  signature: string,
  parse: (env: PrecompileEnv) => A,
  apply: (env: PrecompileEnv, arg: A) => Promise<void>,
): PrecompileFunction {
  const name = signature.slice(0, signature.indexOf('('));
  return {
    signature,
    async run(env) {
      env.gas.charge(REWARD_SETTER_GAS);
      requireWritable(env);
      const arg = parse(env);
      await requireEnabledCaller(env, REWARD_MANAGER_ADDRESS, `non-enabled cannot call ${name}`);
      await apply(env, arg);
      return new Uint8Array(0);
    },
  };
}

const noArgs = (): undefined => undefined;

/** setRewardAddress's argument: before Durango only a length that is a multiple of 32 is required. */
function rewardAddressArg(env: PrecompileEnv): Uint8Array {
  if (!env.durango && env.args.length % WORD_BYTES !== 0) {
    throw new PrecompileHalt(`invalid input length for setting reward address: ${env.args.length}`);
  }
  return wordToAddress(readWords(env.args, 1)[0]!);
}

export const rewardManager: PrecompileModule<RewardManagerConfig> = allowListModule<RewardManagerConfig>({
  key: 'rewardManagerConfig',
  address: REWARD_MANAGER_ADDRESS,
  parseExtra(o, field) {
    const initial = o.initialRewardConfig;
    return initial === undefined || initial === null ? {} : { initialRewardConfig: parseInitialRewardConfig(initial, `${field}.initialRewardConfig`) };
  },
  extraJson(config) {
    const initial = config.initialRewardConfig;
    if (!initial) return {};
    const rewardAddress = initial.rewardAddress && !bytesEqual(initial.rewardAddress, ZERO_ADDRESS) ? { rewardAddress: addressJson(initial.rewardAddress) } : {};
    return { initialRewardConfig: { allowFeeRecipients: initial.allowFeeRecipients, ...rewardAddress } };
  },
  async configureExtra(state, config, _block, chain) {
    const initial = config.initialRewardConfig;
    if (initial === undefined) {
      // Without an initial config the chain config's allowFeeRecipients decides.
      await storeValue(state, chain.allowFeeRecipients ? ALLOW_FEE_RECIPIENTS_VALUE : leftPad32(BLACKHOLE_ADDRESS));
    } else if (initial.allowFeeRecipients) {
      await storeValue(state, ALLOW_FEE_RECIPIENTS_VALUE);
    } else if (!initial.rewardAddress || bytesEqual(initial.rewardAddress, ZERO_ADDRESS)) {
      await storeValue(state, leftPad32(BLACKHOLE_ADDRESS));
    } else {
      await storeValue(state, leftPad32(initial.rewardAddress));
    }
  },
  functions: [
    rewardSetter('allowFeeRecipients()', noArgs, async (env) => {
      if (env.durango) {
        env.gas.charge(FEE_RECIPIENTS_ALLOWED_EVENT_GAS);
        env.emit([FEE_RECIPIENTS_ALLOWED_TOPIC, addressWord(env.call.caller)]);
      }
      await storeValue(env.call.state, ALLOW_FEE_RECIPIENTS_VALUE);
    }),
    rewardSetter('disableRewards()', noArgs, async (env) => {
      if (env.durango) {
        env.gas.charge(REWARDS_DISABLED_EVENT_GAS);
        env.emit([REWARDS_DISABLED_TOPIC, addressWord(env.call.caller)]);
      }
      await storeValue(env.call.state, leftPad32(BLACKHOLE_ADDRESS));
    }),
    rewardSetter('setRewardAddress(address)', rewardAddressArg, async (env, address) => {
      if (bytesEqual(address, ZERO_ADDRESS)) throw new PrecompileHalt('reward address cannot be empty');
      const state = env.call.state;
      if (env.durango) {
        env.gas.charge(REWARD_ADDRESS_CHANGED_EVENT_GAS);
        const old = wordToAddress(await state.getStorage(REWARD_MANAGER_ADDRESS, REWARD_ADDRESS_SLOT));
        env.emit([REWARD_ADDRESS_CHANGED_TOPIC, addressWord(env.call.caller), addressWord(old), addressWord(address)]);
      }
      await storeValue(state, leftPad32(address));
    }),
    {
      signature: 'currentRewardAddress()',
      async run(env) {
        env.gas.charge(REWARD_GETTER_GAS);
        return addressWord(wordToAddress(await env.call.state.getStorage(REWARD_MANAGER_ADDRESS, REWARD_ADDRESS_SLOT)));
      },
    },
    {
      signature: 'areFeeRecipientsAllowed()',
      async run(env) {
        env.gas.charge(REWARD_GETTER_GAS);
        const value = await env.call.state.getStorage(REWARD_MANAGER_ADDRESS, REWARD_ADDRESS_SLOT);
        return boolWord(bytesEqual(value, ALLOW_FEE_RECIPIENTS_VALUE));
      },
    },
  ],
});
