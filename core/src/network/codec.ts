/**
 * The peer-to-peer message codec: a Message to its payload bytes and back.
 * The payload is what a frame carries after its length prefix (framing.ts): u16 CODEC_VERSION, u8 op,
 * then the op's fields in the order LAYOUT lists them (README.md has the table).
 *
 * Decoding is strict and bounded: every count and length is checked against its limit and against
 * the bytes that remain BEFORE anything is allocated, trailing bytes are refused, and every failure
 * is a NetworkError naming the op and the field. Decoded IDs and byte strings are copies, never views
 * of the input: a message kept for long (a block in a cache) never pins the receive buffer it came
 * in, and the caller may reuse that buffer; the copy costs at most one memcpy of the payload.
 */
import { isIP } from 'node:net';
import { Id, Reader, Writer, isNodeError } from '@cornice/sdk';
import { NetworkError, type NetworkErrorCode } from './errors.js';
import { MAX_PAYLOAD_BYTES } from './framing.js';
import {
  CODEC_VERSION,
  MAX_ANCESTORS,
  MAX_CONTAINER_IDS,
  MAX_MESSAGE_BYTES,
  MAX_PEER_CERT_BYTES,
  MAX_PEERS,
  MAX_SIGNATURE_BYTES,
  MAX_VERSION_BYTES,
  Op,
  type IpPort,
  type Message,
  type MessageOf,
  type OpName,
  type PeerInfo,
} from './messages.js';

/** Bytes before an op's fields: u16 codec version, u8 op. */
export const HEADER_BYTES = 3;
/** An IP address on the wire: 16 bytes (IPv4 as IPv4-mapped IPv6). */
const IP_BYTES = 16;
/** The fewest bytes of one PeerList entry: cert length, IP, u16 port, u64 time, signature length. */
const PEER_BYTES = 4 + IP_BYTES + 2 + 8 + 4;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();
const LONE_SURROGATE = /\p{Cs}/u;

/** The op and field being read or written, for error messages: `Chits: containerIds count 5000 exceeds 2048`. */
class Where {
  field = '';
  constructor(readonly op: string) {}

  fail(code: NetworkErrorCode, what: string): NetworkError {
    return new NetworkError(code, `${this.op}: ${this.field} ${what}`, { op: this.op, field: this.field });
  }

  /** A NetworkError for anything the sdk's Reader/Writer threw here; other errors (bugs) pass as they are. */
  wrap(e: unknown): unknown {
    if (e instanceof NetworkError || !isNodeError(e)) return e;
    const data = e.data as { needed?: number; remaining?: number } | undefined;
    if (e.code === 'InsufficientLength' && data?.needed !== undefined) {
      return this.fail('Malformed', `truncated: needs ${data.needed} bytes, ${data.remaining} remain`);
    }
    return this.fail(e.code === 'TooLarge' ? 'TooLarge' : 'Malformed', e.message);
  }
}

interface FieldCodec<T> {
  write(w: Writer, value: T, at: Where): void;
  read(r: Reader, at: Where): T;
}

const u32: FieldCodec<number> = {
  write: (w, v) => void w.u32(v),
  read: (r) => r.u32(),
};

const u64: FieldCodec<bigint> = {
  write(w, v, at) {
    if (typeof v !== 'bigint') throw at.fail('Malformed', `is not a bigint: ${String(v)}`);
    w.u64(v);
  },
  read: (r) => r.u64(),
};

/** The bytes of an Id or ShortId (of any copy of the sdk: a VM's block ID may come from a plugin's). */
function idBytes(v: unknown, length: number, at: Where): Uint8Array {
  let b: unknown;
  try {
    b = (v as { bytes?: unknown } | null | undefined)?.bytes;
  } catch {
    b = undefined;
  }
  if (!(b instanceof Uint8Array) || b.length !== length) throw at.fail('Malformed', `is not a ${length}-byte ID`);
  return b;
}

const id: FieldCodec<Id> = {
  write: (w, v, at) => void w.fixedBytes(idBytes(v, Id.LENGTH, at)),
  read: (r) => r.id(),
};

const bytes: FieldCodec<Uint8Array> = {
  write(w, v, at) {
    if (!(v instanceof Uint8Array)) throw at.fail('Malformed', 'is not a Uint8Array');
    w.bytes(v);
  },
  read(r, at) {
    const n = r.u32();
    if (n > r.remaining) throw at.fail('Malformed', `length ${n} exceeds the ${r.remaining} remaining bytes`);
    return r.fixedBytes(n);
  },
};

/** Bytes with a u32 length of at most `max`: longer is TooLarge, either way. */
function boundedBytes(max: number): FieldCodec<Uint8Array> {
  return {
    write(w, v, at) {
      if (!(v instanceof Uint8Array)) throw at.fail('Malformed', 'is not a Uint8Array');
      if (v.length > max) throw at.fail('TooLarge', `length ${v.length} exceeds ${max}`);
      w.bytes(v);
    },
    read(r, at) {
      const n = r.u32();
      if (n > max) throw at.fail('TooLarge', `length ${n} exceeds ${max}`);
      if (n > r.remaining) throw at.fail('Malformed', `length ${n} exceeds the ${r.remaining} remaining bytes`);
      return r.fixedBytes(n);
    },
  };
}

/** A list's u32 count, checked against its limit and against what the remaining bytes can hold. */
function readCount(r: Reader, at: Where, max: number, itemBytes: number): number {
  const n = r.u32();
  if (n > max) throw at.fail('TooLarge', `count ${n} exceeds ${max}`);
  if (n * itemBytes > r.remaining) {
    throw at.fail('Malformed', `count ${n} needs ${n * itemBytes} bytes, ${r.remaining} remain`);
  }
  return n;
}

function writeCount(w: Writer, items: unknown, at: Where, max: number): asserts items is readonly unknown[] {
  if (!Array.isArray(items)) throw at.fail('Malformed', 'is not an array');
  if (items.length > max) throw at.fail('TooLarge', `count ${items.length} exceeds ${max}`);
  w.u32(items.length);
}

/** A list: u32 count (at most `max`), then each item; `itemBytes` is the fewest bytes one item takes. */
function list<T>(item: FieldCodec<T>, max: number, itemBytes: number): FieldCodec<T[]> {
  return {
    write(w, items, at) {
      writeCount(w, items, at, max);
      const base = at.field;
      for (let i = 0; i < items.length; i++) {
        at.field = `${base}[${i}]`;
        item.write(w, items[i]!, at);
      }
    },
    read(r, at) {
      const n = readCount(r, at, max, itemBytes);
      const base = at.field;
      const out: T[] = [];
      for (let i = 0; i < n; i++) {
        at.field = `${base}[${i}]`;
        out.push(item.read(r, at));
      }
      return out;
    },
  };
}

/** 16 bytes for a v4 or v6 address (v4 as `::ffff:a.b.c.d`); a v6 zone (`%eth0`) does not fit. */
export function ipToBytes(ip: string): Uint8Array | undefined {
  const kind = typeof ip === 'string' ? isIP(ip) : 0;
  if (kind === 0 || ip.includes('%')) return undefined;
  const out = new Uint8Array(IP_BYTES);
  if (kind === 4) {
    out[10] = out[11] = 0xff;
    out.set(ip.split('.').map(Number), 12);
    return out;
  }
  // isIP vouched for the syntax: at most one '::', hex groups, maybe a dotted v4 tail.
  const groups = (part: string | undefined): number[] =>
    !part
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = ip.split('::');
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** The text of 16 address bytes: dotted v4 when IPv4-mapped, else RFC 5952 v6 (lower case, longest zero run as `::`). */
export function ipFromBytes(b: Uint8Array): string {
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return b.subarray(12, 16).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!);
  let best = -1;
  let bestLen = 1; // a single zero group is not compressed
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  return best < 0 ? hex(groups) : `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

const ip: FieldCodec<string> = {
  write(w, v, at) {
    const b = ipToBytes(v);
    if (!b) throw at.fail('Malformed', `is not an IP address: ${JSON.stringify(String(v).slice(0, 64))}`);
    w.fixedBytes(b);
  },
  read: (r) => ipFromBytes(r.fixedBytes(IP_BYTES)),
};

/** A u16 port; `nonZero` where it must name a listening port (PeerList). */
function port(nonZero: boolean): FieldCodec<number> {
  return {
    write(w, v, at) {
      if (nonZero && v === 0) throw at.fail('Malformed', 'is 0');
      w.u16(v);
    },
    read(r, at) {
      const p = r.u16();
      if (nonZero && p === 0) throw at.fail('Malformed', 'is 0');
      return p;
    },
  };
}

/** A record of fixed fields, written in `fields`' order; error messages name `outer.inner`. */
function record<T extends object>(fields: { readonly [K in keyof T]-?: FieldCodec<T[K]> }): FieldCodec<T> {
  const entries = Object.entries(fields) as [keyof T & string, FieldCodec<unknown>][];
  return {
    write(w, v, at) {
      if (typeof v !== 'object' || v === null) throw at.fail('Malformed', 'is not an object');
      const base = at.field;
      for (const [name, codec] of entries) {
        at.field = `${base}.${name}`;
        codec.write(w, v[name], at);
      }
    },
    read(r, at) {
      const base = at.field;
      const out: Partial<T> = {};
      for (const [name, codec] of entries) {
        at.field = `${base}.${name}`;
        out[name] = codec.read(r, at) as T[typeof name];
      }
      return out as T;
    },
  };
}

const ipPort = record<IpPort>({ ip, port: port(false) });
const signature = boundedBytes(MAX_SIGNATURE_BYTES);
const peers = list(record<PeerInfo>({ cert: boundedBytes(MAX_PEER_CERT_BYTES), ip, port: port(true), time: u64, signature }), MAX_PEERS, PEER_BYTES);
const ids = list(id, MAX_CONTAINER_IDS, Id.LENGTH);
const containers = list(bytes, MAX_ANCESTORS, 4);

/** The version string: u16 length (at most MAX_VERSION_BYTES), then UTF-8 (a leading BOM is kept, not stripped). */
const versionString: FieldCodec<string> = {
  write(w, v, at) {
    if (typeof v !== 'string' || LONE_SURROGATE.test(v)) throw at.fail('Malformed', 'is not a well-formed string');
    const b = utf8Encoder.encode(v);
    if (b.length > MAX_VERSION_BYTES) throw at.fail('TooLarge', `length ${b.length} exceeds ${MAX_VERSION_BYTES}`);
    w.u16(b.length).fixedBytes(b);
  },
  read(r, at) {
    const n = r.u16();
    if (n > MAX_VERSION_BYTES) throw at.fail('TooLarge', `length ${n} exceeds ${MAX_VERSION_BYTES}`);
    const b = r.fixedBytes(n);
    try {
      return utf8.decode(b);
    } catch {
      throw at.fail('Malformed', 'is not valid UTF-8');
    }
  },
};

type Fields<M> = { readonly [K in Exclude<keyof M, 'op'>]-?: FieldCodec<M[K]> };

/** Each op's fields, in wire order (the compiler checks every field of the Message type is here). */
const LAYOUT: { readonly [O in OpName]: Fields<MessageOf<O>> } = {
  GetVersion: {},
  Version: { networkId: u32, nonce: u64, time: u64, listen: ipPort, ipTime: u64, ipSignature: signature, version: versionString },
  GetPeerList: {},
  PeerList: { peers },
  GetAcceptedFrontier: { chainId: id, requestId: u32 },
  AcceptedFrontier: { chainId: id, requestId: u32, containerIds: ids },
  GetAccepted: { chainId: id, requestId: u32, containerIds: ids },
  Accepted: { chainId: id, requestId: u32, containerIds: ids },
  Get: { chainId: id, requestId: u32, containerId: id },
  Put: { chainId: id, requestId: u32, container: bytes },
  PushQuery: { chainId: id, requestId: u32, container: bytes },
  PullQuery: { chainId: id, requestId: u32, containerId: id },
  Chits: { chainId: id, requestId: u32, containerIds: ids },
  Ping: {},
  Pong: {},
  GetAncestors: { chainId: id, requestId: u32, containerId: id },
  Ancestors: { chainId: id, requestId: u32, containers },
  Gossip: { chainId: id, payload: bytes },
};

interface OpSpec {
  name: OpName;
  code: number;
  fields: [string, FieldCodec<unknown>][];
}

const SPECS = new Map<string, OpSpec>();
const BY_CODE: (OpSpec | undefined)[] = [];
for (const name of Object.keys(Op) as OpName[]) {
  const spec: OpSpec = { name, code: Op[name], fields: Object.entries(LAYOUT[name]) as [string, FieldCodec<unknown>][] };
  SPECS.set(name, spec);
  BY_CODE[spec.code] = spec;
}

/** The payload of `m` (no frame prefix); NetworkError when a value is out of range or over a limit. */
export function encodeMessage(m: Message): Uint8Array {
  const op: unknown = (m as { op?: unknown } | null | undefined)?.op;
  const spec = typeof op === 'string' ? SPECS.get(op) : undefined;
  if (!spec) throw new NetworkError('UnknownOp', `unknown op ${JSON.stringify(String(op).slice(0, 64))}`);
  const w = new Writer({ maxSize: MAX_PAYLOAD_BYTES, maxSliceLength: MAX_PAYLOAD_BYTES });
  w.u16(CODEC_VERSION).u8(spec.code);
  const at = new Where(spec.name);
  try {
    for (const [name, codec] of spec.fields) {
      at.field = name;
      codec.write(w, (m as unknown as Record<string, unknown>)[name], at);
    }
  } catch (e) {
    throw at.wrap(e);
  }
  return w.finish();
}

/** The message a payload holds; NetworkError (never another error) for anything but one valid message. */
export function decodeMessage(payload: Uint8Array): Message {
  if (payload.length > MAX_MESSAGE_BYTES) {
    throw new NetworkError('TooLarge', `message of ${payload.length} bytes exceeds ${MAX_MESSAGE_BYTES}`);
  }
  if (payload.length < HEADER_BYTES) {
    throw new NetworkError('Malformed', `message of ${payload.length} bytes is shorter than its ${HEADER_BYTES}-byte header`);
  }
  const r = new Reader(payload, { maxSize: MAX_MESSAGE_BYTES, maxSliceLength: MAX_MESSAGE_BYTES });
  const version = r.u16();
  if (version !== CODEC_VERSION) {
    throw new NetworkError('WrongVersion', `codec version ${version}, this node speaks ${CODEC_VERSION}`);
  }
  const code = r.u8();
  const spec = BY_CODE[code];
  if (!spec) throw new NetworkError('UnknownOp', `unknown op ${code}`);
  const at = new Where(spec.name);
  const m: Record<string, unknown> = { op: spec.name };
  try {
    for (const [name, codec] of spec.fields) {
      at.field = name;
      m[name] = codec.read(r, at);
    }
  } catch (e) {
    throw at.wrap(e);
  }
  if (r.remaining !== 0) throw new NetworkError('Malformed', `${spec.name}: ${r.remaining} trailing bytes`);
  return m as Message;
}
