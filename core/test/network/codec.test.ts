import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId, toHex } from '@cornice/sdk';
import { decodeMessage, encodeMessage, HEADER_BYTES, ipFromBytes, ipToBytes } from '../../src/network/codec.js';
import { NetworkError } from '../../src/network/errors.js';
import { MAX_PAYLOAD_BYTES } from '../../src/network/framing.js';
import {
  MAX_ANCESTORS,
  MAX_CONTAINER_IDS,
  MAX_MESSAGE_BYTES,
  MAX_PEER_CERT_BYTES,
  MAX_PEERS,
  MAX_SIGNATURE_BYTES,
  MAX_VERSION_BYTES,
  Op,
} from '../../src/network/messages.js';
import { MAX_CERT_BYTES } from '../../src/staking/cert.js';
import type { Message, OpName, PeerInfo } from '../../src/network/messages.js';
import { Prng } from '../../src/testing/sim/prng.js';
import { plain, throwsNetwork, unhex } from './helpers.js';

const test = suite('network message codec');

const fill = (n: number, b: number) => new Uint8Array(n).fill(b);
const chain = Id.fromBytes(fill(32, 0xaa));
const idOf = (n: number) => Id.fromBytes(Uint8Array.from({ length: 32 }, (_, i) => (n * 7 + i) & 0xff));
/** Bytes standing for a certificate or signature (the codec does not look inside). */
const blob = (n: number, len: number) => Uint8Array.from({ length: len }, (_, i) => (n * 13 + i) & 0xff);
/** A PeerList entry. */
const entry = (ip: string, port: number, n = 1, time = 1_700_000_000n): PeerInfo => ({ cert: blob(n, 40), ip, port, time, signature: blob(n + 1, 8) });
const NO_SIG = { ipTime: 0n, ipSignature: new Uint8Array(0) };
const U32_MAX = 0xffffffff;
const U64_MAX = (1n << 64n) - 1n;
const CHAIN_HEX = 'aa'.repeat(32);

const roundTrip = (m: Message): Message => decodeMessage(encodeMessage(m));
const sameMessage = (a: Message, b: Message) => assert.equal(plain(a), plain(b));

/** At least one message of every op, with edge values. */
function samples(): Message[] {
  const maxIds = Array.from({ length: MAX_CONTAINER_IDS }, (_, i) => idOf(i));
  const peers: PeerInfo[] = Array.from({ length: MAX_PEERS }, (_, i) => ({
    cert: blob(i, 300 + (i % 7)),
    ip: i % 2 ? `10.0.${i >> 8}.${i & 0xff}` : `2001:db8::${(i + 1).toString(16)}`,
    port: (i % 65535) + 1,
    time: BigInt(i) * 1_000_003n,
    signature: blob(i + 1, 70 + (i % 3)),
  }));
  return [
    { op: 'GetVersion' },
    {
      op: 'Version',
      networkId: U32_MAX,
      nonce: U64_MAX,
      time: 0n,
      listen: { ip: '2001:db8::1', port: 65535 },
      ipTime: U64_MAX,
      ipSignature: fill(MAX_SIGNATURE_BYTES, 0x5a),
      version: 'é'.repeat(MAX_VERSION_BYTES / 2), // 64 UTF-8 bytes
    },
    { op: 'Version', networkId: 0, nonce: 0n, time: U64_MAX, listen: { ip: '127.0.0.1', port: 0 }, ...NO_SIG, version: '' },
    { op: 'Version', networkId: 1, nonce: 1n, time: 1n, listen: { ip: '::', port: 1 }, ipTime: 1n, ipSignature: blob(3, 72), version: '\uFEFFcornice/1.0.0 😀' },
    { op: 'GetPeerList' },
    { op: 'PeerList', peers: [] },
    { op: 'PeerList', peers },
    { op: 'PeerList', peers: [{ cert: fill(MAX_PEER_CERT_BYTES, 0x30), ip: 'fe80::1:0:0:2', port: 9651, time: U64_MAX, signature: fill(MAX_SIGNATURE_BYTES, 1) }] },
    { op: 'PeerList', peers: [{ cert: new Uint8Array(0), ip: '::1', port: 1, time: 0n, signature: new Uint8Array(0) }] },
    { op: 'GetAcceptedFrontier', chainId: chain, requestId: U32_MAX },
    { op: 'AcceptedFrontier', chainId: chain, requestId: 0, containerIds: [] },
    { op: 'AcceptedFrontier', chainId: Id.empty, requestId: 1, containerIds: maxIds },
    { op: 'GetAccepted', chainId: chain, requestId: 2, containerIds: maxIds },
    { op: 'GetAccepted', chainId: chain, requestId: 2, containerIds: [] },
    { op: 'Accepted', chainId: chain, requestId: U32_MAX, containerIds: maxIds },
    { op: 'Accepted', chainId: chain, requestId: 3, containerIds: [idOf(1)] },
    { op: 'Get', chainId: chain, requestId: 4, containerId: idOf(2) },
    { op: 'Put', chainId: chain, requestId: 5, container: new Uint8Array(0) },
    { op: 'Put', chainId: chain, requestId: U32_MAX, container: fill(100_000, 7) },
    { op: 'PushQuery', chainId: chain, requestId: 6, container: Uint8Array.of(1, 2, 3) },
    { op: 'PullQuery', chainId: chain, requestId: 7, containerId: idOf(5) },
    { op: 'Chits', chainId: chain, requestId: 8, containerIds: maxIds },
    { op: 'Chits', chainId: chain, requestId: 8, containerIds: [] },
    { op: 'Ping' },
    { op: 'Pong' },
    { op: 'GetAncestors', chainId: chain, requestId: 9, containerId: idOf(6) },
    { op: 'Ancestors', chainId: chain, requestId: 10, containers: [] },
    {
      op: 'Ancestors',
      chainId: chain,
      requestId: 10,
      containers: Array.from({ length: MAX_ANCESTORS }, (_, i) => fill(i % 5, i & 0xff)),
    },
    { op: 'Gossip', chainId: chain, payload: new Uint8Array(0) },
    { op: 'Gossip', chainId: chain, payload: fill(1000, 0xfe) },
  ];
}

test('every op round-trips with edge values (max counts, 64-byte version, v4 and v6, empty lists, u32/u64 maxima)', () => {
  const seen = new Set<OpName>();
  for (const m of samples()) {
    seen.add(m.op);
    sameMessage(roundTrip(m), m);
  }
  assert.equal([...seen].sort(), (Object.keys(Op) as OpName[]).sort());
});

test('the largest payload that fits a frame encodes; one byte more is refused', () => {
  const overhead = HEADER_BYTES + 32 + 4 + 4;
  const m = (n: number): Message => ({ op: 'PushQuery', chainId: chain, requestId: 1, container: fill(n, 1) });
  const bytes = encodeMessage(m(MAX_PAYLOAD_BYTES - overhead));
  assert.is(bytes.length, MAX_PAYLOAD_BYTES);
  assert.is(MAX_PAYLOAD_BYTES, MAX_MESSAGE_BYTES - 4);
  sameMessage(decodeMessage(bytes), m(MAX_PAYLOAD_BYTES - overhead));
  throwsNetwork(() => encodeMessage(m(MAX_PAYLOAD_BYTES - overhead + 1)), 'TooLarge', /^PushQuery: container .*2097148/);
  // Ancestors within its count limit but over the size limit.
  const big: Message = { op: 'Ancestors', chainId: chain, requestId: 1, containers: Array.from({ length: 3 }, () => fill(1 << 20, 0)) };
  throwsNetwork(() => encodeMessage(big), 'TooLarge', /^Ancestors: containers\[1\] /);
});

test('the PeerList certificate bound is the certificate bound a peer may present', () => {
  assert.is(MAX_PEER_CERT_BYTES, MAX_CERT_BYTES);
});

test('byte-exact layouts: Chits, Version, PeerList, Ancestors, Gossip, Ping', () => {
  const vectors: [Message, string][] = [
    [
      { op: 'Chits', chainId: chain, requestId: 7, containerIds: [Id.fromBytes(fill(32, 0xbb))] },
      `0001 0c ${CHAIN_HEX} 00000007 00000001 ${'bb'.repeat(32)}`,
    ],
    [
      {
        op: 'Version',
        networkId: 12345,
        nonce: 0x0102030405060708n,
        time: 1_600_000_000n,
        listen: { ip: '127.0.0.1', port: 9651 },
        ipTime: 1_599_999_990n,
        ipSignature: Uint8Array.of(0xde, 0xad),
        version: 'cornice/0.1.0',
      },
      '0001 01 00003039 0102030405060708 000000005f5e1000 00000000000000000000ffff7f000001 25b3 000000005f5e0ff6 00000002 dead 000d ' +
        toHex(new TextEncoder().encode('cornice/0.1.0')),
    ],
    [
      { op: 'PeerList', peers: [{ cert: Uint8Array.of(0x30, 0x01, 0xff), ip: '::1', port: 9651, time: 2n, signature: Uint8Array.of(0xcc) }] },
      `0001 03 00000001 00000003 3001ff 00000000000000000000000000000001 25b3 0000000000000002 00000001 cc`,
    ],
    [
      { op: 'Ancestors', chainId: chain, requestId: 2, containers: [Uint8Array.of(1, 2, 3), new Uint8Array(0)] },
      `0001 10 ${CHAIN_HEX} 00000002 00000002 00000003 010203 00000000`,
    ],
    [{ op: 'Gossip', chainId: chain, payload: Uint8Array.of(0xab, 0xcd) }, `0001 11 ${CHAIN_HEX} 00000002 abcd`],
    [{ op: 'Put', chainId: chain, requestId: 1, container: Uint8Array.of(9) }, `0001 09 ${CHAIN_HEX} 00000001 00000001 09`],
    [{ op: 'Ping' }, '0001 0d'],
  ];
  for (const [m, layout] of vectors) {
    assert.is(toHex(encodeMessage(m)), toHex(unhex(layout)), m.op);
    sameMessage(decodeMessage(unhex(layout)), m);
  }
});

test('IPs: v4 travels IPv4-mapped and comes back dotted; v6 comes back in RFC 5952 form', () => {
  assert.is(toHex(ipToBytes('10.1.2.3')!), '00000000000000000000ffff0a010203');
  assert.is(ipFromBytes(ipToBytes('::ffff:10.1.2.3')!), '10.1.2.3');
  assert.is(ipFromBytes(ipToBytes('::FFFF:a01:203')!), '10.1.2.3');
  for (const [text, canonical] of [
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['1:0:3:4:5:6:7:8', '1:0:3:4:5:6:7:8'],
    ['fe80::1:2.3.4.5', 'fe80::1:203:405'],
    ['::1.2.3.4', '::102:304'],
  ]) {
    assert.is(ipFromBytes(ipToBytes(text!)!), canonical, text);
    assert.is(`[${canonical}]`, new URL(`http://[${text}]/`).hostname, text); // the WHATWG serializer agrees
  }
  for (const bad of ['localhost', '1.2.3.04', '256.1.1.1', 'fe80::1%eth0', '[::1]', '', '1:2:3:4:5:6:7:8:9']) {
    assert.is(ipToBytes(bad), undefined, bad);
  }
});

test('decoded IDs and byte strings are copies: the input buffer can be reused', () => {
  const input = encodeMessage({ op: 'Put', chainId: chain, requestId: 1, container: fill(64, 5) });
  const m = decodeMessage(input) as Extract<Message, { op: 'Put' }>;
  input.fill(0);
  assert.is(toHex(m.container), '05'.repeat(64));
  assert.not.ok(m.container.buffer === input.buffer);
  assert.ok(m.chainId.equals(chain));
});

const chitsHeader = `0001 0c ${CHAIN_HEX} 00000001`;

test('decode errors: header, version, op, trailing bytes, oversized input', () => {
  for (const n of [0, 1, 2]) throwsNetwork(() => decodeMessage(new Uint8Array(n)), 'Malformed', `message of ${n} bytes is shorter than its 3-byte header`);
  throwsNetwork(() => decodeMessage(unhex('0000 0d')), 'WrongVersion', 'codec version 0, this node speaks 1');
  throwsNetwork(() => decodeMessage(unhex('ffff 0d')), 'WrongVersion', /codec version 65535/);
  throwsNetwork(() => decodeMessage(unhex('0001 12')), 'UnknownOp', 'unknown op 18');
  throwsNetwork(() => decodeMessage(unhex('0001 ff 00')), 'UnknownOp', 'unknown op 255');
  throwsNetwork(() => decodeMessage(unhex('0001 0d 00')), 'Malformed', 'Ping: 1 trailing bytes');
  throwsNetwork(() => decodeMessage(unhex(`${chitsHeader} 00000000 0102`)), 'Malformed', 'Chits: 2 trailing bytes');
  throwsNetwork(() => decodeMessage(new Uint8Array(MAX_MESSAGE_BYTES + 1)), 'TooLarge', `message of ${MAX_MESSAGE_BYTES + 1} bytes exceeds ${MAX_MESSAGE_BYTES}`);
  // A payload of exactly MAX_MESSAGE_BYTES (the largest frame accepted) is decoded.
  const gossip = new Uint8Array(MAX_MESSAGE_BYTES);
  gossip.set(unhex(`0001 11 ${CHAIN_HEX}`));
  new DataView(gossip.buffer).setUint32(35, MAX_MESSAGE_BYTES - 39);
  assert.is((decodeMessage(gossip) as Extract<Message, { op: 'Gossip' }>).payload.length, MAX_MESSAGE_BYTES - 39);
});

test('decode errors: counts above the limits name the op, the field and the limit', () => {
  throwsNetwork(() => decodeMessage(unhex(`${chitsHeader} 00001388`)), 'TooLarge', 'Chits: containerIds count 5000 exceeds 2048');
  throwsNetwork(() => decodeMessage(unhex(`0001 05 ${CHAIN_HEX} 00000001 ffffffff`)), 'TooLarge', 'AcceptedFrontier: containerIds count 4294967295 exceeds 2048');
  throwsNetwork(() => decodeMessage(unhex('0001 03 00000401')), 'TooLarge', 'PeerList: peers count 1025 exceeds 1024');
  throwsNetwork(() => decodeMessage(unhex(`0001 10 ${CHAIN_HEX} 00000001 00000801`)), 'TooLarge', 'Ancestors: containers count 2049 exceeds 2048');
  throwsNetwork(() => decodeMessage(unhex(`0001 01 00000001 ${'00'.repeat(16)} ${'00'.repeat(16)} 0000 ${'00'.repeat(8)} 00000000 0041`)), 'TooLarge', 'Version: version length 65 exceeds 64');
  throwsNetwork(() => decodeMessage(unhex(`0001 01 00000001 ${'00'.repeat(16)} ${'00'.repeat(16)} 0000 ${'00'.repeat(8)} 00000401`)), 'TooLarge', 'Version: ipSignature length 1025 exceeds 1024');
  throwsNetwork(() => decodeMessage(unhex(`0001 03 00000001 00004001 ${'00'.repeat(30)}`)), 'TooLarge', 'PeerList: peers[0].cert length 16385 exceeds 16384');
  const peerHead = `0001 03 00000001 00000001 30 00000000000000000000ffff01020304 0001 ${'00'.repeat(8)}`;
  throwsNetwork(() => decodeMessage(unhex(`${peerHead} 00000401 ${'00'.repeat(8)}`)), 'TooLarge', 'PeerList: peers[0].signature length 1025 exceeds 1024');
});

test('decode errors: lengths and counts beyond the remaining bytes are refused before allocating', () => {
  throwsNetwork(() => decodeMessage(unhex(`${chitsHeader} 00000002 ${'bb'.repeat(32)}`)), 'Malformed', 'Chits: containerIds count 2 needs 64 bytes, 32 remain');
  throwsNetwork(() => decodeMessage(unhex(`0001 03 00000001 ${'00'.repeat(20)}`)), 'Malformed', 'PeerList: peers count 1 needs 34 bytes, 20 remain');
  throwsNetwork(() => decodeMessage(unhex(`0001 03 00000001 00000100 ${'00'.repeat(40)}`)), 'Malformed', 'PeerList: peers[0].cert length 256 exceeds the 40 remaining bytes');
  throwsNetwork(() => decodeMessage(unhex(`0001 10 ${CHAIN_HEX} 00000001 00000001 00000005 0102`)), 'Malformed', 'Ancestors: containers[0] length 5 exceeds the 2 remaining bytes');
  throwsNetwork(() => decodeMessage(unhex(`0001 08 ${CHAIN_HEX} 00000001 ${'bb'.repeat(31)}`)), 'Malformed', 'Get: containerId truncated: needs 32 bytes, 31 remain');
  throwsNetwork(() => decodeMessage(unhex(`0001 04 ${'aa'.repeat(10)}`)), 'Malformed', 'GetAcceptedFrontier: chainId truncated: needs 32 bytes, 10 remain');
  throwsNetwork(() => decodeMessage(unhex(`0001 01 00000001 ${'00'.repeat(16)} ${'00'.repeat(16)} 00 00 ${'00'.repeat(8)} 00000000 0003 6162`)), 'Malformed', 'Version: version truncated: needs 3 bytes, 2 remain');
  throwsNetwork(() => decodeMessage(unhex(`0001 01 00000001 ${'00'.repeat(16)} ${'00'.repeat(16)} 00 00 ${'00'.repeat(8)} 00000009 0102`)), 'Malformed', 'Version: ipSignature length 9 exceeds the 2 remaining bytes');
  // A Put announcing a 2 GiB container: refused from the 4 length bytes, nothing of that size allocated.
  const before = process.memoryUsage().arrayBuffers;
  throwsNetwork(() => decodeMessage(unhex(`0001 09 ${CHAIN_HEX} 00000001 80000000 00`)), 'Malformed', 'Put: container length 2147483648 exceeds the 1 remaining bytes');
  assert.ok(process.memoryUsage().arrayBuffers - before < 1 << 20);
});

test('decode errors: invalid UTF-8 and a zero port in a PeerList', () => {
  const version = (hex: string) => unhex(`0001 01 00000001 ${'00'.repeat(16)} ${'00'.repeat(16)} 0000 ${'00'.repeat(8)} 00000000 ${hex}`);
  for (const bad of ['0001 ff', '0002 c0af', '0003 eda080', '0001 80', '0002 e282']) {
    throwsNetwork(() => decodeMessage(version(bad)), 'Malformed', 'Version: version is not valid UTF-8');
  }
  assert.is((decodeMessage(version('0003 efbbbf')) as Extract<Message, { op: 'Version' }>).version, '\uFEFF'); // BOM kept
  const peer = (port: string) => `00000001 30 00000000000000000000ffff01020304 ${port} ${'00'.repeat(8)} 00000001 cc`;
  throwsNetwork(() => decodeMessage(unhex(`0001 03 00000002 ${peer('0001')} ${peer('0000')}`)), 'Malformed', 'PeerList: peers[1].port is 0');
  // Port 0 in Version.listen is allowed: whether such a peer is accepted is the handshake's business.
  assert.is((decodeMessage(version('0000')) as Extract<Message, { op: 'Version' }>).listen.port, 0);
});

test('encode refuses what would not decode: limits, ranges, types, unknown ops', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => idOf(i));
  throwsNetwork(() => encodeMessage({ op: 'Chits', chainId: chain, requestId: 1, containerIds: ids(MAX_CONTAINER_IDS + 1) }), 'TooLarge', 'Chits: containerIds count 2049 exceeds 2048');
  const peers = Array.from({ length: MAX_PEERS + 1 }, () => entry('1.2.3.4', 1));
  throwsNetwork(() => encodeMessage({ op: 'PeerList', peers }), 'TooLarge', 'PeerList: peers count 1025 exceeds 1024');
  const containers = Array.from({ length: MAX_ANCESTORS + 1 }, () => new Uint8Array(0));
  throwsNetwork(() => encodeMessage({ op: 'Ancestors', chainId: chain, requestId: 1, containers }), 'TooLarge', 'Ancestors: containers count 2049 exceeds 2048');
  const version = (v: Partial<Extract<Message, { op: 'Version' }>>): Message => ({
    op: 'Version',
    networkId: 1,
    nonce: 1n,
    time: 1n,
    listen: { ip: '1.2.3.4', port: 9651 },
    ...NO_SIG,
    version: 'cornice/1.0.0',
    ...v,
  });
  throwsNetwork(() => encodeMessage(version({ version: 'x'.repeat(65) })), 'TooLarge', 'Version: version length 65 exceeds 64');
  throwsNetwork(() => encodeMessage(version({ version: 'é'.repeat(33) })), 'TooLarge', 'Version: version length 66 exceeds 64');
  throwsNetwork(() => encodeMessage(version({ version: 'a\uD800' })), 'Malformed', 'Version: version is not a well-formed string');
  throwsNetwork(() => encodeMessage(version({ networkId: -1 })), 'Malformed', /^Version: networkId u32 out of range: -1/);
  throwsNetwork(() => encodeMessage(version({ networkId: 2 ** 32 })), 'Malformed', /^Version: networkId u32 out of range/);
  throwsNetwork(() => encodeMessage(version({ nonce: 1 as unknown as bigint })), 'Malformed', 'Version: nonce is not a bigint: 1');
  throwsNetwork(() => encodeMessage(version({ time: U64_MAX + 1n })), 'Malformed', /^Version: time u64 out of range/);
  throwsNetwork(() => encodeMessage(version({ listen: { ip: 'localhost', port: 1 } })), 'Malformed', 'Version: listen.ip is not an IP address: "localhost"');
  throwsNetwork(() => encodeMessage(version({ listen: { ip: 'fe80::1%eth0', port: 1 } })), 'Malformed', /^Version: listen.ip is not an IP address/);
  throwsNetwork(() => encodeMessage(version({ listen: { ip: '1.2.3.4', port: 65536 } })), 'Malformed', /^Version: listen.port u16 out of range/);
  throwsNetwork(() => encodeMessage(version({ listen: null as unknown as { ip: string; port: number } })), 'Malformed', 'Version: listen is not an object');
  throwsNetwork(() => encodeMessage(version({ ipSignature: fill(MAX_SIGNATURE_BYTES + 1, 1) })), 'TooLarge', 'Version: ipSignature length 1025 exceeds 1024');
  throwsNetwork(() => encodeMessage(version({ ipSignature: 'ab' as unknown as Uint8Array })), 'Malformed', 'Version: ipSignature is not a Uint8Array');
  throwsNetwork(() => encodeMessage(version({ ipTime: -1n })), 'Malformed', /^Version: ipTime u64 out of range/);
  throwsNetwork(() => encodeMessage({ op: 'PeerList', peers: [entry('1.2.3.4', 0)] }), 'Malformed', 'PeerList: peers[0].port is 0');
  throwsNetwork(() => encodeMessage({ op: 'PeerList', peers: [{ ...entry('1.2.3.4', 1), cert: fill(MAX_PEER_CERT_BYTES + 1, 0) }] }), 'TooLarge', 'PeerList: peers[0].cert length 16385 exceeds 16384');
  throwsNetwork(() => encodeMessage({ op: 'PeerList', peers: [{ ...entry('1.2.3.4', 1), signature: undefined as unknown as Uint8Array }] }), 'Malformed', 'PeerList: peers[0].signature is not a Uint8Array');
  throwsNetwork(() => encodeMessage({ op: 'PeerList', peers: [{ ...entry('1.2.3.4', 1), time: 5 as unknown as bigint }] }), 'Malformed', 'PeerList: peers[0].time is not a bigint: 5');
  throwsNetwork(() => encodeMessage({ op: 'Get', chainId: ShortId.empty as unknown as Id, requestId: 1, containerId: Id.empty }), 'Malformed', 'Get: chainId is not a 32-byte ID');
  throwsNetwork(() => encodeMessage({ op: 'Get', chainId: chain, requestId: 1.5, containerId: Id.empty }), 'Malformed', /^Get: requestId u32 out of range: 1.5/);
  throwsNetwork(() => encodeMessage({ op: 'Put', chainId: chain, requestId: 1, container: 'ab' as unknown as Uint8Array }), 'Malformed', 'Put: container is not a Uint8Array');
  throwsNetwork(() => encodeMessage({ op: 'Chits', chainId: chain, requestId: 1, containerIds: [chain, undefined as unknown as Id] }), 'Malformed', 'Chits: containerIds[1] is not a 32-byte ID');
  throwsNetwork(() => encodeMessage({ op: 'Nope' } as unknown as Message), 'UnknownOp', 'unknown op "Nope"');
  throwsNetwork(() => encodeMessage({ op: 'toString' } as unknown as Message), 'UnknownOp', 'unknown op "toString"');
});

test('an ID from another copy of the sdk (a plugin VM\'s block ID) is encoded by its bytes', () => {
  const foreign = { bytes: fill(32, 0xbb), key: 'bb'.repeat(32) } as unknown as Id;
  const bytes = encodeMessage({ op: 'Get', chainId: chain, requestId: 1, containerId: foreign });
  assert.is(toHex(bytes), toHex(unhex(`0001 08 ${CHAIN_HEX} 00000001 ${'bb'.repeat(32)}`)));
});

/** A mutated copy of `base`, or random bytes: what a broken or hostile peer might send. */
function fuzzCase(rng: Prng, bases: Uint8Array[]): Uint8Array {
  const base = bases[rng.int(bases.length)]!;
  const pick = rng.int(7);
  if (pick === 0) {
    const b = rng.bytes(rng.int(300));
    if (b.length >= 3 && rng.int(2) === 0) b.set([0, 0, rng.int(19)]);
    return b;
  }
  const b = base.slice();
  switch (pick) {
    case 1: // flipped bytes
      for (let i = 1 + rng.int(4); i > 0 && b.length > 0; i--) b[rng.int(b.length)] = rng.int(256);
      return b;
    case 2: // truncation
      return b.slice(0, rng.int(b.length + 1));
    case 3: {
      // trailing bytes
      const out = new Uint8Array(b.length + 1 + rng.int(8));
      out.set(b);
      out.set(rng.bytes(out.length - b.length), b.length);
      return out;
    }
    case 4: {
      // a huge or limit-crossing count/length somewhere after the header
      if (b.length < HEADER_BYTES + 4) return b;
      const values = [U32_MAX, 0x80000000, 0x7fffffff, 0x10000, MAX_CONTAINER_IDS + 1, MAX_PEERS + 1, 65, 1, 0];
      new DataView(b.buffer).setUint32(HEADER_BYTES + rng.int(b.length - HEADER_BYTES - 3), values[rng.int(values.length)]!);
      return b;
    }
    case 5: // another op or version in front of these fields
      b[rng.int(3)] = rng.int(4) === 0 ? rng.int(256) : rng.int(19);
      return b;
    default: {
      // a byte deleted
      if (b.length === 0) return b;
      const at = rng.int(b.length);
      return Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + 1)]);
    }
  }
}

test('fuzz: 20,000 random and mutated payloads decode to a message (which re-encodes to the same bytes) or throw NetworkError, fast', () => {
  const peers: PeerInfo[] = [entry('1.2.3.4', 1, 1), entry('2001:db8::2', 9651, 2)];
  const bases = [
    ...samples().filter((m) => encodeMessage(m).length < 2000),
    { op: 'PeerList', peers },
    { op: 'Chits', chainId: chain, requestId: 3, containerIds: [idOf(1), idOf(2), idOf(3)] },
    { op: 'Ancestors', chainId: chain, requestId: 4, containers: [fill(40, 1), fill(3, 2), fill(0, 0)] },
  ].map((m) => encodeMessage(m as Message));
  const rng = new Prng(20_251_009);
  const counts = { ok: 0, Malformed: 0, TooLarge: 0, UnknownOp: 0, WrongVersion: 0 };
  let slowest = 0;
  const started = performance.now();
  for (let i = 0; i < 20_000; i++) {
    const input = fuzzCase(rng, bases);
    const t0 = performance.now();
    try {
      const m = decodeMessage(input);
      counts.ok++;
      assert.is(toHex(encodeMessage(m)), toHex(input), `case ${i}: decoding is not canonical`);
    } catch (e) {
      if (!(e instanceof NetworkError)) assert.unreachable(`case ${i} (${toHex(input).slice(0, 200)}) threw ${String(e)}`);
      counts[(e as NetworkError).code]++;
    }
    slowest = Math.max(slowest, performance.now() - t0);
  }
  const total = performance.now() - started;
  assert.ok(total < 5_000, `fuzz took ${total} ms`);
  assert.ok(slowest < 250, `slowest case ${slowest} ms`);
  // Every outcome is exercised, so the generator really reaches past the header.
  for (const [k, n] of Object.entries(counts)) assert.ok(n > 50, `${k}: ${n}`);
});

test.run();
