/**
 * The chain's genesis: coreth-style JSON (`config` + `alloc` + header fields), as in the local
 * C-Chain genesis. Every field is checked; an invalid one is an EvmChainError('InvalidGenesis')
 * naming it.
 */
import { fromHex, utf8Decode } from '@cornice/sdk';
import { EvmChainError } from '../errors.js';

export interface GenesisAccount {
  readonly address: Uint8Array;
  readonly balance: bigint;
  readonly nonce: bigint;
  readonly code?: Uint8Array;
  /** 32-byte slot -> 32-byte value. */
  readonly storage: ReadonlyArray<readonly [Uint8Array, Uint8Array]>;
}

export interface EvmGenesis {
  /** The EVM chain ID (config.chainId). */
  readonly chainId: bigint;
  /** The whole `config` object, for extensions (e.g. the subnet-EVM's feeConfig). */
  readonly config: Readonly<Record<string, unknown>>;
  readonly gasLimit: bigint;
  readonly timestamp: bigint;
  readonly extraData: Uint8Array;
  readonly coinbase: Uint8Array;
  readonly difficulty: bigint;
  readonly mixHash: Uint8Array;
  readonly nonce: Uint8Array;
  /** The genesis block's base fee, when the JSON gives one. */
  readonly baseFeePerGas?: bigint;
  readonly alloc: readonly GenesisAccount[];
}

const invalid = (field: string, why: string) => new EvmChainError('InvalidGenesis', `invalid genesis: ${field}: ${why}`, { field });

const HEX = /^0x[0-9a-fA-F]*$/;

/** A non-negative integer: a JSON number, a decimal string or a 0x hex string. */
export function parseQuantity(v: unknown, field: string, max = (1n << 256n) - 1n): bigint {
  let n: bigint;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw invalid(field, 'must be a non-negative integer');
    n = BigInt(v);
  } else if (typeof v === 'string' && (/^0x[0-9a-fA-F]{1,64}$/.test(v) || /^[0-9]{1,78}$/.test(v))) {
    n = BigInt(v);
  } else {
    throw invalid(field, 'must be a non-negative integer (number, decimal or 0x hex string)');
  }
  if (n > max) throw invalid(field, `must be at most ${max}`);
  return n;
}

export function parseBytes(v: unknown, field: string, length?: number, maxLength = 1 << 20): Uint8Array {
  if (typeof v !== 'string' || !HEX.test(v) || v.length % 2 !== 0) throw invalid(field, 'must be an even-length 0x hex string');
  const n = (v.length - 2) / 2;
  if (length !== undefined && n !== length) throw invalid(field, `must be ${length} bytes`);
  if (n > maxLength) throw invalid(field, `must be at most ${maxLength} bytes`);
  return fromHex(v);
}

function parseAddressKey(k: string, field: string): Uint8Array {
  const hex = k.startsWith('0x') || k.startsWith('0X') ? k.slice(2) : k;
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) throw invalid(field, 'must be a 20-byte hex address');
  return fromHex(hex);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Most alloc entries a genesis may hold (bounds initialize's work). */
export const MAX_GENESIS_ACCOUNTS = 100_000;

export function parseGenesis(bytes: Uint8Array): EvmGenesis {
  let json: unknown;
  try {
    json = JSON.parse(utf8Decode(bytes));
  } catch {
    throw new EvmChainError('InvalidGenesis', 'invalid genesis: not valid JSON', { field: '' });
  }
  if (!isObject(json)) throw invalid('(root)', 'must be a JSON object');
  const config = json['config'];
  if (!isObject(config)) throw invalid('config', 'must be an object');
  const chainId = parseQuantity(config['chainId'], 'config.chainId', (1n << 63n) - 1n);
  if (chainId === 0n) throw invalid('config.chainId', 'must be positive');
  const gasLimit = json['gasLimit'] === undefined ? 15_000_000n : parseQuantity(json['gasLimit'], 'gasLimit', (1n << 63n) - 1n);
  if (gasLimit < 21_000n) throw invalid('gasLimit', 'must be at least 21000');
  const timestamp = json['timestamp'] === undefined ? 0n : parseQuantity(json['timestamp'], 'timestamp', (1n << 63n) - 1n);
  const extraData = json['extraData'] === undefined ? new Uint8Array() : parseBytes(json['extraData'], 'extraData', undefined, 32);
  const coinbase = json['coinbase'] === undefined ? new Uint8Array(20) : parseBytes(json['coinbase'], 'coinbase', 20);
  const difficulty = json['difficulty'] === undefined ? 0n : parseQuantity(json['difficulty'], 'difficulty');
  const mixHash = json['mixHash'] === undefined ? new Uint8Array(32) : parseBytes(json['mixHash'], 'mixHash', 32);
  const nonceQ = json['nonce'] === undefined ? 0n : parseQuantity(json['nonce'], 'nonce', (1n << 64n) - 1n);
  const nonce = new Uint8Array(8);
  new DataView(nonce.buffer).setBigUint64(0, nonceQ);
  const baseFeePerGas = json['baseFeePerGas'] === undefined ? undefined : parseQuantity(json['baseFeePerGas'], 'baseFeePerGas');
  for (const f of ['number', 'gasUsed'] as const) {
    if (json[f] !== undefined && parseQuantity(json[f], f) !== 0n) throw invalid(f, 'must be 0');
  }
  if (json['parentHash'] !== undefined && parseBytes(json['parentHash'], 'parentHash', 32).some((b) => b !== 0)) {
    throw invalid('parentHash', 'must be zero');
  }
  const allocJson = json['alloc'] ?? {};
  if (!isObject(allocJson)) throw invalid('alloc', 'must be an object of address -> account');
  const entries = Object.entries(allocJson);
  if (entries.length > MAX_GENESIS_ACCOUNTS) throw invalid('alloc', `must hold at most ${MAX_GENESIS_ACCOUNTS} accounts`);
  const alloc: GenesisAccount[] = [];
  for (const [key, acct] of entries) {
    const field = `alloc.${key}`;
    const address = parseAddressKey(key, field);
    if (!isObject(acct)) throw invalid(field, 'must be an object');
    const balance = acct['balance'] === undefined ? 0n : parseQuantity(acct['balance'], `${field}.balance`);
    const nonce = acct['nonce'] === undefined ? 0n : parseQuantity(acct['nonce'], `${field}.nonce`, (1n << 64n) - 1n);
    const code = acct['code'] === undefined ? undefined : parseBytes(acct['code'], `${field}.code`, undefined, 24_576);
    const storageJson = acct['storage'] ?? {};
    if (!isObject(storageJson)) throw invalid(`${field}.storage`, 'must be an object of slot -> value');
    const storage: Array<[Uint8Array, Uint8Array]> = [];
    for (const [slot, value] of Object.entries(storageJson)) {
      const slotBytes = parseBytes(slot, `${field}.storage.${slot}`, 32);
      storage.push([slotBytes, parseBytes(value, `${field}.storage.${slot}`, 32)]);
    }
    alloc.push({ address, balance, nonce, ...(code ? { code } : {}), storage });
  }
  return { chainId, config, gasLimit, timestamp, extraData, coinbase, difficulty, mixHash, nonce, ...(baseFeePerGas !== undefined ? { baseFeePerGas } : {}), alloc };
}
