/**
 * A third party's stateful precompile for the subnet-EVM, built only on @cornice/subnet-evm's public
 * API: `helloWorldConfig` at 0x0300…00, a counter behind an allow list.
 *
 *   interface IHelloWorld is IAllowList {
 *     event Incremented(address indexed sender, uint256 value);
 *     function increment() external;                      // enabled callers; 25,000 gas (+ event)
 *     function getCounter() external view returns (uint256); // anyone; 5,000 gas
 *   }
 *
 * Config: the allow-list fields, `blockTimestamp`, `disable`, and `initialCount` (a number).
 */
import {
  allowListFunctions,
  allowListModuleConfigJson,
  checksumAddress,
  ConfigError,
  configureAllowList,
  eventTopic,
  isEnabledRole,
  LOG_DATA_GAS,
  LOG_GAS,
  LOG_TOPIC_GAS,
  parseAllowListModuleConfig,
  PrecompileHalt,
  precompileDispatcher,
  READ_GAS_PER_SLOT,
  readRole,
  registerPrecompile,
  requireWritable,
  uint256Word,
  wordToBigint,
  WRITE_GAS_PER_SLOT,
  addressWord,
  type AllowListModuleConfig,
  type PrecompileModule,
} from '@cornice/subnet-evm';
import { fromHex } from '@cornice/sdk';

export const HELLO_WORLD_ADDRESS = fromHex('0x0300000000000000000000000000000000000000');

/** The counter's slot: far from the allow list's slots (addresses left-padded to 32 bytes). */
export const COUNTER_SLOT = fromHex(`0x636f756e746572${'00'.repeat(25)}`); // "counter"

export const INCREMENT_GAS = WRITE_GAS_PER_SLOT + READ_GAS_PER_SLOT;
export const GET_COUNTER_GAS = READ_GAS_PER_SLOT;
export const INCREMENTED_EVENT_GAS = LOG_GAS + 2n * LOG_TOPIC_GAS + 32n * LOG_DATA_GAS;
export const INCREMENTED_TOPIC = eventTopic('Incremented(address,uint256)');

export interface HelloWorldConfig extends AllowListModuleConfig {
  readonly initialCount: bigint;
}

export const helloWorld: PrecompileModule<HelloWorldConfig> = {
  key: 'helloWorldConfig',
  address: HELLO_WORLD_ADDRESS,
  parseConfig(json, field, chain) {
    const allowList = parseAllowListModuleConfig(json, field, chain);
    const raw = (json as { initialCount?: unknown }).initialCount;
    if (raw !== undefined && (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0)) {
      throw new ConfigError(`${field}.initialCount`, 'must be a non-negative integer');
    }
    return { ...allowList, initialCount: BigInt(raw ?? 0) };
  },
  configJson: (config) => ({ ...allowListModuleConfigJson(config), ...(config.initialCount ? { initialCount: Number(config.initialCount) } : {}) }),
  async configure(state, config) {
    await state.putStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT, uint256Word(config.initialCount));
    await configureAllowList(state, HELLO_WORLD_ADDRESS, config);
  },
  run: precompileDispatcher<HelloWorldConfig>([
    ...allowListFunctions(HELLO_WORLD_ADDRESS),
    {
      signature: 'increment()',
      async run(env) {
        env.gas.charge(INCREMENT_GAS);
        requireWritable(env);
        const { state, caller } = env.call;
        if (!isEnabledRole(await readRole(state, HELLO_WORLD_ADDRESS, caller))) {
          throw new PrecompileHalt(`non-enabled cannot increment: ${checksumAddress(caller)}`);
        }
        const value = wordToBigint(await state.getStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT)) + 1n;
        if (env.durango) {
          env.gas.charge(INCREMENTED_EVENT_GAS);
          env.emit([INCREMENTED_TOPIC, addressWord(caller)], uint256Word(value));
        }
        await state.putStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT, uint256Word(value));
        return new Uint8Array(0);
      },
    },
    {
      signature: 'getCounter()',
      async run(env) {
        env.gas.charge(GET_COUNTER_GAS);
        return env.call.state.getStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT);
      },
    },
  ]),
};

/** Registers the module (once, before a chain with `helloWorldConfig` in its config starts). */
export function registerHelloWorld(): void {
  registerPrecompile(helloWorld);
}
