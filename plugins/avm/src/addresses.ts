/**
 * How the asset chain writes addresses, as the reference node does: `<chain>-<cb58 of the 20-byte address>`,
 * where <chain> is the chain's primary alias (`X` on the X-Chain) or, without aliases, its ID. On
 * input any alias of the chain or its ID is accepted before the dash.
 *
 * Parsing is split in two: the shape (a dash, then a 20-byte cb58 address) is checked by the param
 * parser (`chainAddress()`); whether the prefix names THIS chain is checked by the service against
 * the chain's aliases of the moment (`addressOn`). Both fail with -32602 naming the field.
 */
import { InvalidParamsError, ShortId, cb58MaxChars, isNodeError, type Id, type Parser } from '@cornice/sdk';

/** Longest address accepted: a chain alias (admin.aliasChain allows 128 characters), a dash, the cb58 of 20 bytes. */
export const MAX_ADDRESS_CHARS = 128 + 1 + cb58MaxChars(ShortId.LENGTH);

/** An address as written, before its chain prefix is checked: the prefix and the 20 bytes. */
export class ChainAddress {
  constructor(
    /** What was written before the dash: an alias or the ID of a chain. */
    readonly chain: string,
    readonly address: ShortId,
  ) {}

  toString(): string {
    return `${this.chain}-${this.address}`;
  }

  /** Clients may send a ChainAddress where an address is expected: it travels as its text. */
  toJSON(): string {
    return this.toString();
  }
}

/** The chain an address must belong to: its ID and aliases (primary first). */
export interface AddressChain {
  readonly chainId: Id;
  readonly aliases: readonly string[];
}

/** `<primary alias>-<cb58>`, or `<chain ID>-<cb58>` when the chain has no alias. */
export function formatAddress(chain: AddressChain, address: ShortId): string {
  return `${chain.aliases[0] ?? chain.chainId.toString()}-${address}`;
}

/**
 * Splits `text` into its prefix and address; -32602 naming `field` otherwise, with the reference's
 * texts: `invalid address` without a dash, then the cb58 decoder's (`invalid input checksum`,
 * `Invalid base58 digit ('0')`, …) or `input has insufficient length` for the part after it.
 */
export function parseAddress(text: string, field: string): ChainAddress {
  // cb58 has no dash, so the address is after the last one (addressOn refuses a prefix with a dash
  // that is not an alias: the reference wants exactly one dash).
  const dash = text.lastIndexOf('-');
  if (dash < 0) throw new InvalidParamsError(field, 'invalid address');
  const encoded = text.slice(dash + 1);
  try {
    return new ChainAddress(text.slice(0, dash), ShortId.fromString(encoded)); // bounds the length before decoding
  } catch (e) {
    if (isNodeError(e)) throw new InvalidParamsError(field, e.message);
    throw e;
  }
}

/** The 20 bytes of `a` when its prefix names `chain`; else -32602 `<field>: wrong blockchain ID` (or `invalid address`). */
export function addressOn(chain: AddressChain, a: ChainAddress, field: string): ShortId {
  if (a.chain === chain.chainId.toString() || chain.aliases.includes(a.chain)) return a.address;
  // A prefix with a dash could only come from text with two dashes: the reference calls it invalid.
  throw new InvalidParamsError(field, a.chain.includes('-') ? 'invalid address' : 'wrong blockchain ID');
}

/** Param parser of an address of the form `<chain>-<cb58>` (the chain is checked by `addressOn`). */
export function chainAddress(): Parser<ChainAddress> {
  return {
    kind: 'string',
    optional: false,
    max: MAX_ADDRESS_CHARS,
    describe: () => 'address `<chain alias or ID>-<cb58 of 20 bytes>`, e.g. X-6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV',
    parse(v, field) {
      if (typeof v !== 'string') throw new InvalidParamsError(field, `expected an address string but got ${typeName(v)}`);
      if (v.length > MAX_ADDRESS_CHARS) throw new InvalidParamsError(field, `must be at most ${MAX_ADDRESS_CHARS} characters (got ${v.length})`);
      return parseAddress(v, field);
    },
  };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
