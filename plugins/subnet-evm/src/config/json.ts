/**
 * JSON helpers for the chain config and upgrade.json: integer fields as subnet-evm reads them
 * (JSON numbers; decimal and 0x strings too, so values above 2^53 survive JavaScript's JSON), a
 * lossless parse of config bytes, and integers back to JSON. Every error is a ConfigError naming the
 * field's JSON path.
 */
import { utf8Decode } from '@cornice/sdk';
import { ConfigError } from '../types.js';

export const MAX_UINT64 = (1n << 64n) - 1n;
export const MAX_UINT256 = (1n << 256n) - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON kind of a value, for "got ..." texts. */
export function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/** An object field (or a ConfigError naming it). */
export function objectAt(v: unknown, field: string): Record<string, unknown> {
  if (!isObject(v)) throw new ConfigError(field, `must be a JSON object, got ${jsonKind(v)}`);
  return v;
}

const DECIMAL = /^-?[0-9]{1,80}$/;
const HEX = /^0[xX][0-9a-fA-F]{1,64}$/;

/**
 * An integer in [min, max]: a JSON number (an integer below 2^53: larger ones have already lost
 * precision in JSON.parse), or a decimal or 0x string. Negative values are allowed when `min` is.
 */
export function parseInteger(v: unknown, field: string, min: bigint, max: bigint): bigint {
  let n: bigint;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new ConfigError(field, `must be an integer, got ${v}`);
    if (!Number.isSafeInteger(v)) throw new ConfigError(field, `${v} is too large for a JSON number here (precision lost): write it as a decimal string`);
    n = BigInt(v);
  } else if (typeof v === 'bigint') {
    n = v;
  } else if (typeof v === 'string' && (DECIMAL.test(v) || HEX.test(v))) {
    n = BigInt(v);
  } else {
    throw new ConfigError(field, `must be an integer (a JSON number, or a decimal or 0x string), got ${typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : jsonKind(v)}`);
  }
  if (n < min) throw new ConfigError(field, min === 0n ? `must not be negative, got ${n}` : `must be at least ${min}, got ${n}`);
  if (n > max) throw new ConfigError(field, `must be at most ${max}, got ${n}`);
  return n;
}

/** A uint64 (timestamps, block numbers). */
export function parseUint64(v: unknown, field: string): bigint {
  return parseInteger(v, field, 0n, MAX_UINT64);
}

export function parseBool(v: unknown, field: string): boolean {
  if (typeof v !== 'boolean') throw new ConfigError(field, `must be true or false, got ${jsonKind(v)}`);
  return v;
}

/** An integer as JSON: a number when exact (below 2^53), else a decimal string (clients accept both). */
export function jsonInteger(n: bigint): number | string {
  return n <= MAX_SAFE && n >= -MAX_SAFE ? Number(n) : n.toString();
}

/**
 * Parses JSON text keeping integers exact: an integer literal beyond 2^53 becomes its decimal
 * string (which parseInteger accepts), instead of a rounded number. Throws ConfigError(field) on
 * malformed JSON.
 */
export function parseJsonLossless(bytes: Uint8Array, field: string): unknown {
  const text = utf8Decode(bytes);
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string, honouring escapes.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
      const literal = text.slice(i, j);
      if (/^-?[0-9]{16,}$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += text.slice(last, i) + '"' + literal + '"';
        last = j;
      }
      i = j - 1;
    }
  }
  try {
    return JSON.parse(out + text.slice(last));
  } catch (e) {
    throw new ConfigError(field, `not valid JSON (${(e as Error).message})`);
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
}
