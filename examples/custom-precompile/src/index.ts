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
  allowListModule,
  ConfigError,
  eventTopic,
  LOG_DATA_GAS,
  LOG_GAS,
  LOG_TOPIC_GAS,
  READ_GAS_PER_SLOT,
  registerPrecompile,
  requireEnabledCaller,
  requireWritable,
  uint256Word,
  wordToBigint,
  WRITE_GAS_PER_SLOT,
  addressWord,
  defineSubnetEvmVM,
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

export const helloWorld: PrecompileModule<HelloWorldConfig> = allowListModule<HelloWorldConfig>({
  key: 'helloWorldConfig',
  address: HELLO_WORLD_ADDRESS,
  parseExtra(o, field) {
    const raw = o.initialCount;
    if (raw !== undefined && (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0)) {
      throw new ConfigError(`${field}.initialCount`, 'must be a non-negative integer');
    }
    return { initialCount: BigInt(raw ?? 0) };
  },
  extraJson: (config) => (config.initialCount ? { initialCount: Number(config.initialCount) } : {}),
  async configureExtra(state, config) {
    await state.putStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT, uint256Word(config.initialCount));
  },
  functions: [
    {
      signature: 'increment()',
      async run(env) {
        env.gas.charge(INCREMENT_GAS);
        requireWritable(env);
        await requireEnabledCaller(env, HELLO_WORLD_ADDRESS, 'non-enabled cannot increment');
        const { state, caller } = env.call;
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
  ],
});

/**
 * The plugin an operator loads (`--vms` or `--plugin-dir`): a subnet-EVM with this precompile, under
 * its own vmID (`helloevm` zero-padded), as avalanchego's precompile-evm ships its own subnet-evm.
 */
export const vmFactory = defineSubnetEvmVM({ name: 'helloevm', precompiles: [helloWorld] });

/**
 * Registers the module for every subnet-EVM chain of this process (an embedder that builds its own
 * node composition; once, before a chain with `helloWorldConfig` in its config starts).
 */
export function registerHelloWorld(): void {
  registerPrecompile(helloWorld);
}
