/**
 * contractNativeMinterConfig at 0x0200…01 (A.3, A.5): mintNativeCoin(address,uint256) for enabled
 * callers, NativeCoinMinted from Durango, and `initialMint` credited on activation.
 */
import { fromHex, toHex } from '@cornice/sdk';
import { ConfigError, type PrecompileModule } from '../types.js';
import { addressWord, checksumAddress, eventTopic, readWords, wordToAddress, wordToBigint, WORD_BYTES } from './abi.js';
import { allowListModule, requireEnabledCaller, type AllowListModuleConfig } from './allow-list.js';
import { addressJson, objectAt, parseAddressJson } from './config.js';
import { LOG_DATA_GAS, LOG_GAS, LOG_TOPIC_GAS, requireStrictLength, requireWritable } from './contract.js';
import { MAX_UINT256 } from '../config/json.js';

export const NATIVE_MINTER_ADDRESS = fromHex('0x0200000000000000000000000000000000000001');

export const MINT_GAS = 30_000n;
/** NativeCoinMinted: 3 topics and one data word. */
export const NATIVE_COIN_MINTED_EVENT_GAS = LOG_GAS + 3n * LOG_TOPIC_GAS + LOG_DATA_GAS * 32n;
export const NATIVE_COIN_MINTED_TOPIC = eventTopic('NativeCoinMinted(address,address,uint256)');

export interface NativeMinterConfig extends AllowListModuleConfig {
  /** Credited on activation, in this order. */
  readonly initialMint: ReadonlyArray<{ readonly address: Uint8Array; readonly amount: bigint }>;
}

/** math.HexOrDecimal256: a `0x` hex or decimal string (a JSON integer is accepted too). */
function parseMintAmount(value: unknown, field: string): bigint {
  if (value === null || value === undefined) throw new ConfigError(field, 'initial mint cannot contain nil amount');
  let amount: bigint;
  if (typeof value === 'bigint') amount = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) amount = BigInt(value);
  else if (typeof value === 'string' && /^(0[xX][0-9a-fA-F]+|-?[0-9]+|)$/.test(value)) amount = value === '' ? 0n : BigInt(value);
  else throw new ConfigError(field, `invalid hex or decimal integer ${JSON.stringify(value)}`);
  if (amount > MAX_UINT256) throw new ConfigError(field, `invalid hex or decimal integer ${JSON.stringify(String(value))}`);
  return amount;
}

function parseInitialMint(value: unknown, field: string): NativeMinterConfig['initialMint'] {
  if (value === undefined || value === null) return [];
  const o = objectAt(value, field);
  const byAddress = new Map<string, { address: Uint8Array; amount: bigint }>();
  for (const [key, raw] of Object.entries(o)) {
    const at = `${field}.${key}`;
    const address = parseAddressJson(key, at);
    const amount = parseMintAmount(raw, at);
    if (amount < 0n) throw new ConfigError(at, `initial mint cannot contain invalid amount ${amount} for address ${checksumAddress(address)}`);
    // Keys naming the same address in another letter case: the last wins, as in a Go map.
    byAddress.set(toHex(address), { address, amount });
  }
  return [...byAddress.values()];
}

export const contractNativeMinter: PrecompileModule<NativeMinterConfig> = allowListModule<NativeMinterConfig>({
  key: 'contractNativeMinterConfig',
  address: NATIVE_MINTER_ADDRESS,
  parseExtra: (o, field) => ({ initialMint: parseInitialMint(o.initialMint, `${field}.initialMint`) }),
  extraJson(config) {
    if (!config.initialMint.length) return {};
    const sorted = [...config.initialMint].sort((a, b) => (toHex(a.address) < toHex(b.address) ? -1 : 1));
    return { initialMint: Object.fromEntries(sorted.map((m) => [addressJson(m.address), `0x${m.amount.toString(16)}`])) };
  },
  async configureExtra(state, config) {
    for (const { address, amount } of config.initialMint) await state.addBalance(address, amount);
  },
  functions: [
    {
      signature: 'mintNativeCoin(address,uint256)',
      async run(env) {
        env.gas.charge(MINT_GAS);
        requireWritable(env);
        requireStrictLength(env, 2 * WORD_BYTES, 'invalid input length for minting');
        const [to, amount] = readWords(env.args, 2) as [Uint8Array, Uint8Array];
        const recipient = wordToAddress(to);
        await requireEnabledCaller(env, NATIVE_MINTER_ADDRESS, 'non-enabled cannot mint');
        const { state, caller } = env.call;
        if (env.durango) {
          env.gas.charge(NATIVE_COIN_MINTED_EVENT_GAS);
          env.emit([NATIVE_COIN_MINTED_TOPIC, addressWord(caller), addressWord(recipient)], amount);
        }
        await state.addBalance(recipient, wordToBigint(amount));
        return new Uint8Array(0);
      },
    },
  ],
});
