/**
 * The shape check of a raw transaction's RLP, run before @ethereumjs decodes it so that a malformed
 * one is refused with geth's `rlp: …` texts (the ones ethers, viem and tooling show users), never
 * @ethereumjs internals. It walks the encoding as geth's decoder reads a LegacyTx, AccessListTx or
 * DynamicFeeTx: header sizes against the input and the enclosing list, canonical sizes and integers,
 * each field's kind and length, the element count, trailing bytes. What passes may still fail
 * @ethereumjs's value checks (admission.ts words those). Tests: tx-rlp.test.ts, and mempool.test.ts
 * "admission errors use Ethereum texts" through eth_sendRawTransaction.
 */

type Kind = 'byte' | 'string' | 'list';

/** A complete text (geth's stream errors that carry no type). */
class RawError extends Error {}

/** A stream error of a decoder's type, and where it happened (innermost first). */
class TypedError extends Error {
  readonly ctx: string[] = [];
  constructor(
    readonly msg: string,
    readonly typ: string,
  ) {
    super(msg);
  }
  text(): string {
    const where = this.ctx.length > 0 ? ', decoding into ' + [...this.ctx].reverse().join('') : '';
    return `rlp: ${this.msg} for ${this.typ}${where}`;
  }
}

/** The end of the enclosing list (geth's EOL): a struct is short of fields, a slice is complete. */
const EOL = Symbol('EOL');

/** A stream error before a decoder gives it a type. */
class StreamError extends Error {}
const CANON_SIZE = 'non-canonical size information';
const CANON_INT = 'non-canonical integer (leading zero bytes)';
const EXPECTED_STRING = 'expected input string or byte';
const EXPECTED_LIST = 'expected input list';
const UINT_OVERFLOW = 'input string too long';
const NOT_AT_EOL = 'input list has too many elements';

function wrap(e: unknown, typ: string): unknown {
  return e instanceof StreamError ? new TypedError(e.message, typ) : e;
}

function addContext(e: unknown, ctx: string): unknown {
  if (e instanceof TypedError) e.ctx.push(ctx);
  return e;
}

interface Head {
  readonly kind: Kind;
  /** Content size (0 for a single byte). */
  readonly size: number;
  /** The byte itself, for kind 'byte'. */
  readonly byte: number;
}

class Stream {
  pos = 0;
  /** Ends of the open lists, innermost last. */
  readonly #ends: number[] = [];
  #head: Head | undefined;

  constructor(readonly b: Uint8Array) {}

  #limit(): number {
    return this.#ends.length > 0 ? this.#ends[this.#ends.length - 1]! : this.b.length;
  }

  /** Bytes of a header, checked as geth's willRead. */
  #take(n: number): number {
    if (this.#ends.length > 0 && n > this.#limit() - this.pos) throw new RawError('rlp: element is larger than containing list');
    if (n > this.b.length - this.pos) throw new RawError('rlp: value size exceeds available input length');
    const at = this.pos;
    this.pos += n;
    return at;
  }

  #sizeOf(n: number): number {
    const at = this.#take(n);
    if (this.b[at] === 0) throw new StreamError(CANON_SIZE);
    let size = 0;
    for (let i = 0; i < n; i++) size = size * 256 + this.b[at + i]!;
    if (size < 56) throw new StreamError(CANON_SIZE);
    return size;
  }

  /** The next value's header (read once; consumed by `skip`, `list`). */
  kind(): Head {
    if (this.#head) return this.#head;
    if (this.#ends.length > 0 && this.pos === this.#limit()) throw EOL;
    if (this.#ends.length === 0 && this.pos >= this.b.length) throw new RawError('EOF');
    const first = this.b[this.#take(1)]!;
    let head: Head;
    if (first < 0x80) head = { kind: 'byte', size: 0, byte: first };
    else if (first < 0xb8) head = { kind: 'string', size: first - 0x80, byte: 0 };
    else if (first < 0xc0) head = { kind: 'string', size: this.#sizeOf(first - 0xb7), byte: 0 };
    else if (first < 0xf8) head = { kind: 'list', size: first - 0xc0, byte: 0 };
    else head = { kind: 'list', size: this.#sizeOf(first - 0xf7), byte: 0 };
    if (this.#ends.length > 0 && head.size > this.#limit() - this.pos) throw new RawError('rlp: element is larger than containing list');
    if (head.size > this.b.length - this.pos) throw new RawError('rlp: value size exceeds available input length');
    this.#head = head;
    return head;
  }

  /** Consumes the current string's content; its bytes. */
  content(): Uint8Array {
    const h = this.#head!;
    this.#head = undefined;
    const at = this.pos;
    this.pos += h.size;
    return this.b.subarray(at, at + h.size);
  }

  list(): void {
    const h = this.kind();
    if (h.kind !== 'list') throw new StreamError(EXPECTED_LIST);
    this.#head = undefined;
    this.#ends.push(this.pos + h.size);
  }

  listEnd(): void {
    if (this.pos !== this.#limit()) throw new StreamError(NOT_AT_EOL);
    this.#ends.pop();
  }
}

type Decoder = (s: Stream) => void;

/**
 * An integer: canonical (no leading zero byte, a single byte below 0x80 as itself), at most
 * `maxBytes` long. The checks come in the order geth's decoder makes them for the type, so a
 * value breaking two rules gets its text (tx-rlp.test.ts).
 */
function integer(typ: string, maxBytes: number | undefined, leadingZeroFirst: boolean): Decoder {
  return (s) => {
    try {
      const h = s.kind();
      if (h.kind === 'list') throw new StreamError(EXPECTED_STRING);
      if (h.kind === 'byte') {
        s.content();
        if (h.byte === 0) throw new StreamError(CANON_INT);
        return;
      }
      if (maxBytes !== undefined && h.size > maxBytes) throw new StreamError(UINT_OVERFLOW);
      const v = s.content();
      const leadingZero = v.length > 0 && v[0] === 0;
      const notCanonSize = v.length === 1 && v[0]! < 128;
      if (leadingZeroFirst ? leadingZero : notCanonSize) throw new StreamError(leadingZeroFirst ? CANON_INT : CANON_SIZE);
      if (leadingZeroFirst ? notCanonSize : leadingZero) throw new StreamError(leadingZeroFirst ? CANON_SIZE : CANON_INT);
    } catch (e) {
      throw wrap(e, typ);
    }
  };
}

const uint64 = integer('uint64', 8, true);
const bigInt = integer('*big.Int', undefined, false);

function bytes(s: Stream): void {
  try {
    const h = s.kind();
    if (h.kind === 'list') throw new StreamError(EXPECTED_STRING);
    const v = s.content();
    if (h.kind === 'string' && v.length === 1 && v[0]! < 128) throw new StreamError(CANON_SIZE);
  } catch (e) {
    throw wrap(e, '[]uint8');
  }
}

/** A fixed-size byte array (common.Address, common.Hash). */
function byteArray(length: number, typ: string): Decoder {
  return (s) => {
    const h = s.kind();
    if (h.kind === 'list') throw new TypedError(EXPECTED_STRING, typ);
    if (h.kind === 'byte') {
      s.content();
      if (length !== 1) throw new TypedError('input string too short', typ);
      return;
    }
    if (h.size > length) throw new TypedError('input string too long', typ);
    if (h.size < length) throw new TypedError('input string too short', typ);
    const v = s.content();
    if (v.length === 1 && v[0]! < 128) throw new TypedError(CANON_SIZE, typ);
  };
}

const address = byteArray(20, 'common.Address');

/** `*common.Address` with `rlp:"nil"`: the empty string is nil (a contract creation). */
function optionalAddress(s: Stream): void {
  let h: Head;
  try {
    h = s.kind();
  } catch (e) {
    throw wrap(e, '*common.Address');
  }
  if (h.kind !== 'byte' && h.size === 0) {
    if (h.kind !== 'string') throw new TypedError('wrong kind of empty value (got List, want String)', '*common.Address');
    s.content();
    return;
  }
  address(s);
}

function slice(elem: Decoder, typ: string): Decoder {
  return (s) => {
    try {
      s.list();
    } catch (e) {
      throw wrap(e, typ);
    }
    for (let i = 0; ; i++) {
      try {
        elem(s);
      } catch (e) {
        if (e === EOL) break;
        throw addContext(e, `[${i}]`);
      }
    }
    try {
      s.listEnd();
    } catch (e) {
      throw wrap(e, typ);
    }
  };
}

function struct(typ: string, fields: readonly (readonly [string, Decoder])[]): Decoder {
  return (s) => {
    try {
      s.list();
    } catch (e) {
      throw wrap(e, typ);
    }
    for (const [name, dec] of fields) {
      try {
        dec(s);
      } catch (e) {
        if (e === EOL) throw new TypedError('too few elements', typ);
        throw addContext(e, '.' + name);
      }
    }
    try {
      s.listEnd();
    } catch (e) {
      throw wrap(e, typ);
    }
  };
}

const accessList = slice(
  struct('types.AccessTuple', [
    ['Address', address],
    ['StorageKeys', slice(byteArray(32, 'common.Hash'), '[]common.Hash')],
  ]),
  'types.AccessList',
);

const TX_TYPES: ReadonlyMap<number, readonly [string, Decoder]> = new Map<number, readonly [string, Decoder]>([
  [
    0,
    [
      'types.LegacyTx',
      struct('types.LegacyTx', [
        ['Nonce', uint64],
        ['GasPrice', bigInt],
        ['Gas', uint64],
        ['To', optionalAddress],
        ['Value', bigInt],
        ['Data', bytes],
        ['V', bigInt],
        ['R', bigInt],
        ['S', bigInt],
      ]),
    ],
  ],
  [
    1,
    [
      'types.AccessListTx',
      struct('types.AccessListTx', [
        ['ChainID', bigInt],
        ['Nonce', uint64],
        ['GasPrice', bigInt],
        ['Gas', uint64],
        ['To', optionalAddress],
        ['Value', bigInt],
        ['Data', bytes],
        ['AccessList', accessList],
        ['V', bigInt],
        ['R', bigInt],
        ['S', bigInt],
      ]),
    ],
  ],
  [
    2,
    [
      'types.DynamicFeeTx',
      struct('types.DynamicFeeTx', [
        ['ChainID', bigInt],
        ['Nonce', uint64],
        ['GasTipCap', bigInt],
        ['GasFeeCap', bigInt],
        ['Gas', uint64],
        ['To', optionalAddress],
        ['Value', bigInt],
        ['Data', bytes],
        ['AccessList', accessList],
        ['V', bigInt],
        ['R', bigInt],
        ['S', bigInt],
      ]),
    ],
  ],
]);

/**
 * geth's text for a raw tx of type `type` (0 legacy: the whole of `payload` is the RLP; 1 and 2: the
 * bytes after the type byte) that does not decode, or undefined when its RLP has the type's shape.
 */
export function txRlpError(type: number, payload: Uint8Array): string | undefined {
  const t = TX_TYPES.get(type);
  if (!t) return undefined;
  const [typ, decode] = t;
  const s = new Stream(payload);
  try {
    decode(s);
  } catch (e) {
    if (e instanceof TypedError) {
      if (e.ctx.length > 0) e.ctx.push(`(${typ})`);
      return e.text();
    }
    if (e instanceof RawError) return e.message;
    if (e instanceof StreamError) return `rlp: ${e.message}`;
    throw e;
  }
  if (s.pos < payload.length) return 'rlp: input contains more than one value';
  return undefined;
}
