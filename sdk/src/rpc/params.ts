/**
 * Param parsers: each checks a JSON value and converts it to the domain type in one step, throwing
 * InvalidParamsError naming the field. They also describe themselves (`kind`, `describe()`), which
 * API docs and the RPC conformance sweeps use to generate valid and invalid inputs.
 */
import { InvalidParamsError } from '../errors/errors.js';
import { cb58Decode, cb58MaxChars } from '../encoding/cb58.js';
import { Id, ShortId } from '../ids/id.js';
import { PrivateKey } from '../crypto/secp256k1.js';

export type ParserKind =
  | 'string'
  | 'uint'
  | 'uint64'
  | 'bool'
  | 'cb58'
  | 'id'
  | 'shortId'
  | 'enum'
  | 'array'
  | 'object'
  | 'json';

export interface Parser<T> {
  readonly kind: ParserKind;
  /** Whether the field may be omitted (or null). */
  readonly optional: boolean;
  /** Checks and converts `value`; `field` is the dotted path used in error messages. */
  parse(value: unknown, field: string): T;
  /** A short human description, e.g. `string (at most 1024 characters)`. */
  describe(): string;
  /** For objects: the declared fields. For arrays: the item parser. */
  readonly fields?: Readonly<Record<string, Parser<unknown>>>;
  readonly item?: Parser<unknown>;
  /** For strings and arrays: the maximum length (characters, items); for cb58: characters. */
  readonly max?: number;
  /** For cb58: the most bytes the value may decode to. */
  readonly maxBytes?: number;
}

/** The converted type a parser produces. */
export type Parsed<P> = P extends Parser<infer T> ? T : never;

function fail(field: string, message: string): never {
  throw new InvalidParamsError(field, message);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function make<T>(kind: ParserKind, describe: string, parse: (v: unknown, f: string) => T, extra: Partial<Parser<T>> = {}): Parser<T> {
  return { kind, optional: false, parse, describe: () => describe, ...extra };
}

export interface StringOptions {
  /** Minimum length in characters (default 0). */
  min?: number;
  /** Maximum length in characters (default 65,536). */
  max?: number;
  pattern?: RegExp;
  /** Text used when `pattern` fails, e.g. `a plain file name`. */
  patternDescription?: string;
}

const DEFAULT_MAX_STRING = 65_536;

function string(opts: StringOptions = {}): Parser<string> {
  const max = opts.max ?? DEFAULT_MAX_STRING;
  const min = opts.min ?? 0;
  return make(
    'string',
    `string (${min ? `${min} to ` : 'at most '}${max} characters)`,
    (v, f) => {
      if (typeof v !== 'string') fail(f, `expected a string but got ${typeName(v)}`);
      if (v.length > max) fail(f, `must be at most ${max} characters (got ${v.length})`);
      if (v.length < min) fail(f, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
      if (opts.pattern && !opts.pattern.test(v)) fail(f, `must be ${opts.patternDescription ?? `a string matching ${opts.pattern}`}`);
      return v;
    },
    { max },
  );
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

function parseUnsigned(v: unknown, f: string, bits: number): bigint {
  let n: bigint;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) fail(f, `expected a non-negative integer but got ${v}`);
    n = BigInt(v);
  } else if (typeof v === 'string') {
    if (!DECIMAL.test(v)) fail(f, `expected a non-negative decimal integer but got "${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`);
    if (v.length > 40) fail(f, `value overflowed uint${bits}`);
    n = BigInt(v);
  } else {
    fail(f, `expected an integer (number or decimal string) but got ${typeName(v)}`);
  }
  if (n >= 1n << BigInt(bits)) fail(f, `value overflowed uint${bits}`);
  return n;
}

/** Unsigned integer up to 2^bits - 1 (bits <= 53), as a JSON number or decimal string. */
function uint(bits: 8 | 16 | 32 | 53 = 32, opts: { min?: number; max?: number } = {}): Parser<number> {
  return make('uint', `uint${bits} (number or decimal string)`, (v, f) => {
    const n = Number(parseUnsigned(v, f, bits));
    if (opts.min !== undefined && n < opts.min) fail(f, `must be at least ${opts.min}`);
    if (opts.max !== undefined && n > opts.max) fail(f, `must be at most ${opts.max}`);
    return n;
  });
}

/** Unsigned 64-bit integer as bigint; accepts a decimal string or a JSON number. */
function uint64(): Parser<bigint> {
  return make('uint64', 'uint64 (decimal string or number)', (v, f) => parseUnsigned(v, f, 64));
}

function bool(): Parser<boolean> {
  return make('bool', 'boolean', (v, f) => {
    if (typeof v !== 'boolean') fail(f, `expected a boolean but got ${typeName(v)}`);
    return v;
  });
}

function decodeCb58(v: unknown, f: string, max: number): Uint8Array {
  if (typeof v !== 'string') fail(f, `expected a cb58 string but got ${typeName(v)}`);
  if (v.length > max) fail(f, `must be at most ${max} characters (got ${v.length})`);
  try {
    return cb58Decode(v);
  } catch (e) {
    fail(f, (e as Error).message);
  }
}

/** Default bound on a cb58 field's decoded size: bigger fields say so (`maxBytes`). */
export const DEFAULT_MAX_CB58_BYTES = 16 * 1024;

export interface Cb58Options {
  /** Exactly this many bytes. */
  length?: number;
  /**
   * At most this many bytes (default `length`, else DEFAULT_MAX_CB58_BYTES). The string's length is
   * checked against the most characters that many bytes can take (`cb58MaxChars`) BEFORE decoding:
   * base58 decoding is not linear, so an unbounded string would hold the event loop.
   */
  maxBytes?: number;
}

/** Bytes written as cb58 (base 58 with checksum). */
function cb58(opts: Cb58Options = {}): Parser<Uint8Array> {
  const maxBytes = opts.maxBytes ?? opts.length ?? DEFAULT_MAX_CB58_BYTES;
  const max = cb58MaxChars(maxBytes);
  return make(
    'cb58',
    opts.length ? `cb58 of exactly ${opts.length} bytes` : `cb58 bytes (at most ${maxBytes})`,
    (v, f) => {
      const b = decodeCb58(v, f, max);
      if (opts.length !== undefined && b.length !== opts.length) fail(f, `expected ${opts.length} bytes but got ${b.length}`);
      if (b.length > maxBytes) fail(f, `must be at most ${maxBytes} bytes (got ${b.length})`);
      return b;
    },
    { max, maxBytes },
  );
}

function id(): Parser<Id> {
  return make('id', 'ID (cb58 of 32 bytes)', (v, f) => Id.fromBytes(checkLen(decodeCb58(v, f, 64), 32, f)), { max: 64 });
}

function shortId(): Parser<ShortId> {
  return make('shortId', 'short ID (cb58 of 20 bytes)', (v, f) => ShortId.fromBytes(checkLen(decodeCb58(v, f, 64), 20, f)), { max: 64 });
}

/**
 * A secp256k1 private key in cb58 (32 bytes). `problem` starts every refusal, so a service can keep
 * its reference text (`problem while parsing privateKey (…)`); the key's bytes are wiped once read
 * and never echoed back.
 */
function privateKey(opts: { problem?: string } = {}): Parser<PrivateKey> {
  const bytes = cb58({ length: 32 });
  const problem = opts.problem ?? 'not a private key';
  const refuse = (field: string, why: string): never => fail(field, `${problem} (${why})`);
  return {
    ...bytes,
    describe: () => 'private key (cb58 of 32 bytes)',
    parse(v, field) {
      let b: Uint8Array;
      try {
        b = bytes.parse(v, field);
      } catch (e) {
        return refuse(field, (e as Error).message.slice(field.length + 2)); // the cb58 parser's reason, without the field
      }
      try {
        return PrivateKey.fromBytes(b);
      } catch {
        return refuse(field, 'not a valid secp256k1 private key');
      } finally {
        b.fill(0);
      }
    },
  };
}

function checkLen(b: Uint8Array, n: number, f: string): Uint8Array {
  if (b.length !== n) fail(f, `expected ${n} bytes but got ${b.length}`);
  return b;
}

function oneOf<const V extends string>(...values: V[]): Parser<V> {
  return make('enum', `one of ${values.join(', ')}`, (v, f) => {
    if (typeof v !== 'string' || !(values as string[]).includes(v)) fail(f, `must be one of ${values.join(', ')}`);
    return v as V;
  });
}

function array<T>(item: Parser<T>, opts: { max?: number; min?: number } = {}): Parser<T[]> {
  const max = opts.max ?? 1024;
  return make(
    'array',
    `array (at most ${max}) of ${item.describe()}`,
    (v, f) => {
      if (!Array.isArray(v)) fail(f, `expected an array but got ${typeName(v)}`);
      if (v.length > max) fail(f, `must have at most ${max} items (got ${v.length})`);
      if (opts.min !== undefined && v.length < opts.min) fail(f, `must have at least ${opts.min} items`);
      return v.map((x, i) => item.parse(x, `${f}[${i}]`));
    },
    { item: item as Parser<unknown>, max },
  );
}

type Shape = Record<string, Parser<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K]['optional'] extends true ? K : never }[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
export type ObjectOf<S extends Shape> = { [K in RequiredKeys<S>]: Parsed<S[K]> } & { [K in OptionalKeys<S>]?: Parsed<S[K]> };

/**
 * A JSON object with declared fields. Field names match case-insensitively and unknown fields are
 * ignored, as the reference node's decoder (Go's encoding/json) did: `fileName` and `filename` both
 * work, and a client that sends a field a later API version defines still gets its call served
 * (test/rpc/params.test.ts). A field given twice (in any case) is refused by name.
 */
function object<S extends Shape>(shape: S): Parser<ObjectOf<S>> {
  const byLower = new Map<string, string>();
  for (const k of Object.keys(shape)) byLower.set(k.toLowerCase(), k);
  return make(
    'object',
    `object {${Object.entries(shape)
      .map(([k, p]) => `${k}${p.optional ? '?' : ''}`)
      .join(', ')}}`,
    (v, f) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(f, `expected an object but got ${typeName(v)}`);
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      for (const [key, value] of Object.entries(v)) {
        const name = byLower.get(key.toLowerCase());
        if (name === undefined) continue;
        const path = f ? `${f}.${key}` : key;
        if (seen.has(name)) fail(path, `duplicate field (${name})`);
        seen.add(name);
        const parser = shape[name]!;
        if (value === null && parser.optional) continue;
        out[name] = parser.parse(value, f ? `${f}.${name}` : name);
      }
      for (const [name, parser] of Object.entries(shape)) {
        if (!seen.has(name) && !parser.optional) fail(f ? `${f}.${name}` : name, 'missing required field');
      }
      return out as ObjectOf<S>;
    },
    { fields: shape },
  );
}

/** Marks a parser optional: the field may be omitted or null, and then is absent from the result. */
function optional<T>(parser: Parser<T>): Parser<T | undefined> & { optional: true } {
  return { ...parser, optional: true as const, describe: () => `${parser.describe()} (optional)` };
}

/** The empty params object `{}` (also accepts omitted/null params). */
const none = (): Parser<Record<string, never>> => object({}) as Parser<Record<string, never>>;

export const p = { string, uint, uint64, bool, cb58, id, shortId, privateKey, oneOf, array, object, optional, none };
