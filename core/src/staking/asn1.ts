/**
 * A small ASN.1 DER writer: just what a self-signed X.509 certificate needs. Every function returns
 * the complete encoding (tag, length, contents) of one value, so values nest by composition:
 * `sequence(integer(2n), oid('1.2.3'))`.
 */
import { NodeError, concatBytes } from '@cornice/sdk';

export type Asn1ErrorCode = 'InvalidValue';

/** A value that DER cannot encode as asked (bad OID, character outside PrintableString...). */
export class Asn1Error extends NodeError<Asn1ErrorCode> {}

/** Universal tag numbers used here. */
export const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30, // constructed
  SET: 0x31, // constructed
} as const;

/** The DER length octets: short form below 128, long form (minimal big-endian) above. */
export function encodeLength(length: number): Uint8Array {
  if (!Number.isSafeInteger(length) || length < 0) throw new Asn1Error('InvalidValue', `invalid length ${length}`);
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** Tag + length + contents. `tag` is the full identifier octet (class, constructed bit, number < 31). */
export function tlv(tag: number, contents: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(tag), encodeLength(contents.length), contents);
}

/** BOOLEAN (DER: true is 0xff). */
export function boolean(value: boolean): Uint8Array {
  return tlv(Tag.BOOLEAN, Uint8Array.of(value ? 0xff : 0x00));
}

/** NULL. */
export function nullValue(): Uint8Array {
  return tlv(Tag.NULL, new Uint8Array(0));
}

/** The minimal two's-complement big-endian bytes of `value`. */
function twosComplement(value: bigint): Uint8Array {
  if (value === 0n) return Uint8Array.of(0);
  const bytes: number[] = [];
  let v = value;
  // Emit bytes until the remaining value is pure sign extension of the last byte's top bit.
  for (;;) {
    const byte = Number(v & 0xffn);
    bytes.unshift(byte);
    v >>= 8n; // arithmetic shift: -1 stays -1
    if ((v === 0n && (byte & 0x80) === 0) || (v === -1n && (byte & 0x80) !== 0)) break;
  }
  return Uint8Array.from(bytes);
}

/**
 * INTEGER. A bigint or number is encoded in minimal two's complement; a Uint8Array is read as an
 * unsigned big-endian magnitude (leading zeros dropped, a 0x00 added when the top bit is set).
 */
export function integer(value: bigint | number | Uint8Array): Uint8Array {
  if (value instanceof Uint8Array) {
    let start = 0;
    while (start < value.length - 1 && value[start] === 0) start++;
    const magnitude = value.length === 0 ? Uint8Array.of(0) : value.subarray(start);
    const contents = (magnitude[0]! & 0x80) !== 0 ? concatBytes(Uint8Array.of(0), magnitude) : magnitude;
    return tlv(Tag.INTEGER, contents);
  }
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new Asn1Error('InvalidValue', `integer ${value} is not a safe integer`);
  }
  return tlv(Tag.INTEGER, twosComplement(BigInt(value)));
}

/** SEQUENCE of already-encoded values, in order. */
export function sequence(...items: Uint8Array[]): Uint8Array {
  return tlv(Tag.SEQUENCE, concatBytes(...items));
}

/** SET OF already-encoded values; DER orders the encodings ascending (shorter first on a tie). */
export function set(...items: Uint8Array[]): Uint8Array {
  const sorted = [...items].sort(compareBytes);
  return tlv(Tag.SET, concatBytes(...sorted));
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function base128(n: bigint): number[] {
  const out = [Number(n & 0x7fn)];
  for (let v = n >> 7n; v > 0n; v >>= 7n) out.unshift(Number(v & 0x7fn) | 0x80);
  return out;
}

/** OBJECT IDENTIFIER from dotted form, e.g. `1.2.840.10045.2.1`. */
export function oid(dotted: string): Uint8Array {
  if (!/^[0-9]+(\.[0-9]+)+$/.test(dotted)) throw new Asn1Error('InvalidValue', `invalid OID ${JSON.stringify(dotted)}`);
  const arcs = dotted.split('.').map((a) => BigInt(a));
  const [first, second, ...rest] = arcs as [bigint, bigint, ...bigint[]];
  if (first > 2n || (first < 2n && second > 39n)) {
    throw new Asn1Error('InvalidValue', `invalid OID ${JSON.stringify(dotted)}`);
  }
  const bytes = [...base128(first * 40n + second)];
  for (const arc of rest) bytes.push(...base128(arc));
  return tlv(Tag.OID, Uint8Array.from(bytes));
}

/** UTF8String. */
export function utf8String(text: string): Uint8Array {
  return tlv(Tag.UTF8_STRING, new TextEncoder().encode(text));
}

/** PrintableString: A-Z a-z 0-9 space ' ( ) + , - . / : = ? only. */
export function printableString(text: string): Uint8Array {
  if (!/^[A-Za-z0-9 '()+,\-./:=?]*$/.test(text)) {
    throw new Asn1Error('InvalidValue', `${JSON.stringify(text)} is not a PrintableString`);
  }
  return tlv(Tag.PRINTABLE_STRING, new TextEncoder().encode(text));
}

/** BIT STRING: `unusedBits` (0-7) of the last byte are padding. */
export function bitString(bytes: Uint8Array, unusedBits = 0): Uint8Array {
  if (!Number.isInteger(unusedBits) || unusedBits < 0 || unusedBits > 7 || (bytes.length === 0 && unusedBits !== 0)) {
    throw new Asn1Error('InvalidValue', `invalid BIT STRING padding ${unusedBits}`);
  }
  return tlv(Tag.BIT_STRING, concatBytes(Uint8Array.of(unusedBits), bytes));
}

/** OCTET STRING. */
export function octetString(bytes: Uint8Array): Uint8Array {
  return tlv(Tag.OCTET_STRING, bytes);
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

function secondsText(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new Asn1Error('InvalidValue', 'invalid date');
  return (
    pad(date.getUTCMonth() + 1, 2) +
    pad(date.getUTCDate(), 2) +
    pad(date.getUTCHours(), 2) +
    pad(date.getUTCMinutes(), 2) +
    pad(date.getUTCSeconds(), 2) +
    'Z'
  );
}

/** UTCTime `YYMMDDHHMMSSZ` (years 1950-2049; milliseconds dropped). */
export function utcTime(date: Date): Uint8Array {
  const year = date.getUTCFullYear();
  if (!(year >= 1950 && year <= 2049)) throw new Asn1Error('InvalidValue', `UTCTime cannot hold the year ${year}`);
  return tlv(Tag.UTC_TIME, new TextEncoder().encode(pad(year % 100, 2) + secondsText(date)));
}

/** GeneralizedTime `YYYYMMDDHHMMSSZ` (milliseconds dropped). */
export function generalizedTime(date: Date): Uint8Array {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) throw new Asn1Error('InvalidValue', `GeneralizedTime cannot hold the year ${year}`);
  return tlv(Tag.GENERALIZED_TIME, new TextEncoder().encode(pad(year, 4) + secondsText(date)));
}

/** An X.509 Time (RFC 5280 §4.1.2.5): UTCTime for 1950-2049, GeneralizedTime otherwise. */
export function time(date: Date): Uint8Array {
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? utcTime(date) : generalizedTime(date);
}

/** `[n] EXPLICIT`: a context-specific constructed tag wrapping one encoded value. */
export function explicit(tagNumber: number, inner: Uint8Array): Uint8Array {
  if (!Number.isInteger(tagNumber) || tagNumber < 0 || tagNumber > 30) {
    throw new Asn1Error('InvalidValue', `invalid context tag [${tagNumber}]`);
  }
  return tlv(0xa0 | tagNumber, inner);
}
