/**
 * Ethereum JSON-RPC hex formats (geth's hexutil): quantities are 0x-hex without leading zeros, data
 * is 0x-hex of even length. Decoders throw ArgumentError with geth's texts ("hex string without 0x
 * prefix", "hex string of odd length", ...); the dispatcher adds "invalid argument N: ".
 */
import { NodeError, toHex } from '@cornice/sdk';
import type { BlockRef } from '../evm-backend.js';

/** A malformed argument (or field of one); the dispatcher reports it as -32602 naming the argument. */
export class ArgumentError extends NodeError<'EthArgument'> {
  constructor(message: string) {
    super('EthArgument', message);
  }
}

/** 0x-hex quantity, no leading zeros ("0x0" for zero). */
export function quantity(n: bigint | number): string {
  return '0x' + n.toString(16);
}

/** 0x-hex data ("0x" when empty). */
export function hexData(bytes: Uint8Array): string {
  return '0x' + toHex(bytes);
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Checks the 0x prefix and the digits; returns nothing, throws geth's texts. */
function checkHex(v: unknown, what: string): asserts v is string {
  if (typeof v !== 'string') throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into ${what}`);
  if (v.length === 0) throw new ArgumentError('empty hex string');
  if (v.length < 2 || v.charCodeAt(0) !== 48 || (v.charCodeAt(1) | 32) !== 120) throw new ArgumentError('hex string without 0x prefix');
  for (let i = 2; i < v.length; i++) if (!isHexDigit(v.charCodeAt(i))) throw new ArgumentError('invalid hex string');
}

/** The JSON kind of a value, for "cannot unmarshal <kind>" messages. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v === 'bigint' ? 'number' : typeof v;
}

/** A hex quantity of at most `bits` bits (hexutil.Big / hexutil.Uint64). */
export function parseQuantity(v: unknown, bits = 256): bigint {
  checkHex(v, 'a hex quantity');
  const digits = v.length - 2;
  if (digits === 0) throw new ArgumentError('hex string "0x"');
  if (digits > 1 && v.charCodeAt(2) === 48) throw new ArgumentError('hex number with leading zero digits');
  if (digits * 4 > bits) throw new ArgumentError(`hex number > ${bits} bits`);
  return BigInt(v);
}

/** A uint64 quantity. */
export function parseUint64(v: unknown): bigint {
  return parseQuantity(v, 64);
}

/** A small index or count (hex quantity) as a number; larger than `max`: an error naming it. */
export function parseIndex(v: unknown, max = 0xffffffff): number {
  const n = parseUint64(v);
  if (n > BigInt(max)) throw new ArgumentError(`index ${n} is larger than ${max}`);
  return Number(n);
}

/** Hex data of any even length (hexutil.Bytes). */
export function parseData(v: unknown): Uint8Array {
  checkHex(v, 'hex data');
  const digits = v.length - 2;
  if (digits % 2 !== 0) throw new ArgumentError('hex string of odd length');
  const out = new Uint8Array(digits / 2);
  for (let i = 0, p = 2; i < out.length; i++, p += 2) out[i] = (nibble(v.charCodeAt(p)) << 4) | nibble(v.charCodeAt(p + 1));
  return out;
}

function nibble(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

function parseFixed(v: unknown, length: number, typeName: string): Uint8Array {
  checkHex(v, typeName);
  const digits = v.length - 2;
  if (digits !== length * 2) {
    if (digits % 2 !== 0) throw new ArgumentError('hex string of odd length');
    throw new ArgumentError(`hex string has length ${digits}, want ${length * 2} for ${typeName}`);
  }
  return parseData(v);
}

/** A 20-byte address (any letter case; no checksum check, as geth). */
export function parseAddress(v: unknown): Uint8Array {
  return parseFixed(v, 20, 'address');
}

/** A 32-byte hash. */
export function parseHash(v: unknown): Uint8Array {
  return parseFixed(v, 32, 'hash');
}

/** A storage slot: a 32-byte hash, or (as geth accepts) a shorter quantity left-padded to 32 bytes. */
export function parseSlot(v: unknown): Uint8Array {
  checkHex(v, 'storage slot');
  const digits = v.length - 2;
  if (digits > 64) throw new ArgumentError('hex string too long, want at most 32 bytes');
  const padded = '0x' + '0'.repeat(64 - digits) + v.slice(2);
  return parseData(padded);
}

export function parseBool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into bool`);
  return v;
}

export function parseString(v: unknown, maxLength = 1024): string {
  if (typeof v !== 'string') throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into string`);
  if (v.length > maxLength) throw new ArgumentError(`string longer than ${maxLength} characters`);
  return v;
}

export type BlockTag = Exclude<BlockRef, { readonly hash: Uint8Array }>;

const TAGS: ReadonlyMap<string, BlockTag> = new Map<string, BlockTag>([
  ['latest', 'latest'],
  ['pending', 'pending'],
  ['safe', 'safe'],
  ['finalized', 'finalized'],
  ['accepted', 'accepted'],
  ['earliest', 'earliest'],
]);

const MAX_INT64 = (1n << 63n) - 1n;

/** A block tag or number (geth's rpc.BlockNumber). */
export function parseBlockNumber(v: unknown): BlockTag {
  if (typeof v === 'string') {
    const tag = TAGS.get(v);
    if (tag !== undefined) return tag;
  }
  const n = parseUint64(v);
  if (n > MAX_INT64) throw new ArgumentError('block number larger than int64');
  return n;
}

/**
 * A block tag, number, plain 32-byte block hash (a 66-character string, as geth's BlockNumberOrHash:
 * ethers sends a hash `blockTag` so), or EIP-1898 object `{blockHash, requireCanonical?}` /
 * `{blockNumber}`. Test: rpc-eth.test.ts "a block hash as the block parameter".
 */
export function parseBlockRef(v: unknown): BlockRef {
  if (typeof v === 'string' && v.length === 66) return { hash: parseHash(v) };
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return parseBlockNumber(v);
  const o = v as { blockHash?: unknown; blockNumber?: unknown; requireCanonical?: unknown };
  const hasHash = o.blockHash !== undefined && o.blockHash !== null;
  const hasNumber = o.blockNumber !== undefined && o.blockNumber !== null;
  if (hasHash && hasNumber) throw new ArgumentError('cannot specify both BlockHash and BlockNumber, choose one or the other');
  if (hasNumber) return parseBlockNumber(o.blockNumber);
  if (!hasHash) throw new ArgumentError('block object needs blockHash or blockNumber');
  const hash = field('blockHash', o.blockHash, parseHash);
  if (o.requireCanonical === undefined || o.requireCanonical === null) return { hash };
  return { hash, requireCanonical: field('requireCanonical', o.requireCanonical, parseBool) };
}

/** Parses one field of an object argument; its errors name the field. */
export function field<T>(name: string, v: unknown, parse: (v: unknown) => T): T {
  try {
    return parse(v);
  } catch (e) {
    if (e instanceof ArgumentError) throw new ArgumentError(`${name}: ${e.message}`);
    throw e;
  }
}
