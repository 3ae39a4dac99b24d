import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '@cornice/sdk';
import { FRAME_PREFIX_BYTES, FrameDecoder, MAX_PAYLOAD_BYTES, frame } from '../../src/network/framing.js';
import { MAX_MESSAGE_BYTES } from '../../src/network/messages.js';
import { Prng } from '../../src/testing/sim/prng.js';
import { throwsNetwork, unhex } from './helpers.js';

const test = suite('network framing');

const payload = (n: number, seed = n) => Uint8Array.from({ length: n }, (_, i) => (seed + i * 31) & 0xff);
const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const hexes = (ps: Uint8Array[]) => ps.map(toHex);

test('frame: u32 big-endian length, then the payload; empty and oversized payloads refused', () => {
  assert.is(toHex(frame(Uint8Array.of(1, 2, 3))), '00000003010203');
  assert.is(frame(new Uint8Array(300)).subarray(0, 4).join(','), '0,0,1,44');
  throwsNetwork(() => frame(new Uint8Array(0)), 'Malformed', 'frame: an empty payload cannot be sent');
  assert.is(frame(new Uint8Array(MAX_PAYLOAD_BYTES)).length, MAX_MESSAGE_BYTES);
  throwsNetwork(() => frame(new Uint8Array(MAX_PAYLOAD_BYTES + 1)), 'TooLarge', `frame: payload of ${MAX_PAYLOAD_BYTES + 1} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
});

test('many frames in one chunk come out in order (views of the chunk, no copy)', () => {
  const ps = [payload(1), payload(5), payload(300), payload(2)];
  const chunk = concat(ps.map(frame));
  const out = new FrameDecoder().push(chunk);
  assert.equal(hexes(out), hexes(ps));
  assert.ok(out.every((p) => p.buffer === chunk.buffer));
});

test('a length prefix or a payload split at every possible point', () => {
  const ps = [payload(7), payload(3)];
  const stream = concat(ps.map(frame));
  for (let cut = 0; cut <= stream.length; cut++) {
    for (let cut2 = cut; cut2 <= stream.length; cut2++) {
      const d = new FrameDecoder();
      const out = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut, cut2)), ...d.push(stream.subarray(cut2))];
      assert.equal(hexes(out), hexes(ps), `cuts at ${cut} and ${cut2}`);
      assert.is(d.buffered, 0);
    }
  }
});

test('a frame over many 1-byte chunks; buffered never exceeds the frame; empty chunks are harmless', () => {
  const p = payload(1000);
  const f = frame(p);
  const d = new FrameDecoder();
  const out: Uint8Array[] = [];
  for (let i = 0; i < f.length; i++) {
    out.push(...d.push(new Uint8Array(0)), ...d.push(f.subarray(i, i + 1)));
    assert.ok(d.buffered <= f.length);
    if (i < f.length - 1) assert.is(d.buffered, i + 1);
  }
  assert.equal(hexes(out), [toHex(p)]);
  assert.is(d.buffered, 0);
});

test('linear time: a 2 MiB frame in 1-byte chunks, and 100,000 small frames in one chunk', () => {
  const big = frame(payload(MAX_PAYLOAD_BYTES));
  const d = new FrameDecoder();
  let t0 = performance.now();
  let got: Uint8Array[] = [];
  for (let i = 0; i < big.length; i++) {
    const out = d.push(big.subarray(i, i + 1));
    if (out.length) got = out;
  }
  const bigMs = performance.now() - t0;
  assert.is(got.length, 1);
  assert.is(got[0]!.length, MAX_PAYLOAD_BYTES);
  assert.ok(got[0]!.every((b, i) => b === ((MAX_PAYLOAD_BYTES + i * 31) & 0xff)));
  assert.ok(bigMs < 3_000, `2 MiB in 1-byte chunks took ${bigMs} ms`);

  const small = concat(Array.from({ length: 100_000 }, (_, i) => frame(payload(1 + (i % 8)))));
  t0 = performance.now();
  assert.is(new FrameDecoder().push(small).length, 100_000);
  const smallMs = performance.now() - t0;
  assert.ok(smallMs < 1_000, `100,000 frames took ${smallMs} ms`);
});

test('a frame of exactly the limit passes; one byte over throws TooLarge naming the size', () => {
  const d = new FrameDecoder({ maxFrameBytes: 10 });
  assert.is(d.push(frame(payload(10)))[0]!.length, 10);
  throwsNetwork(() => d.push(unhex('0000000b')), 'TooLarge', 'frame: announced length 11 exceeds 10');
  const def = new FrameDecoder();
  assert.is(def.maxFrameBytes, MAX_MESSAGE_BYTES);
  const atMax = new Uint8Array(FRAME_PREFIX_BYTES + MAX_MESSAGE_BYTES);
  new DataView(atMax.buffer).setUint32(0, MAX_MESSAGE_BYTES);
  assert.is(def.push(atMax)[0]!.length, MAX_MESSAGE_BYTES);
  throwsNetwork(() => def.push(unhex('00200001')), 'TooLarge', `frame: announced length ${MAX_MESSAGE_BYTES + 1} exceeds ${MAX_MESSAGE_BYTES}`);
});

test('a frame announcing 2 GiB throws as soon as its prefix is in, before anything is allocated or buffered', () => {
  const d = new FrameDecoder();
  assert.equal(d.push(unhex('8000')), []);
  const before = process.memoryUsage().arrayBuffers;
  throwsNetwork(() => d.push(unhex('0000 01020304')), 'TooLarge', 'frame: announced length 2147483648 exceeds 2097152');
  assert.ok(process.memoryUsage().arrayBuffers - before < 1 << 20, 'no big buffer was allocated');
  assert.is(d.buffered, 0);
});

test('a zero-length frame is Malformed; after an error every push throws it again', () => {
  const d = new FrameDecoder();
  const err = throwsNetwork(() => d.push(unhex('00000001 ff 00000000')), 'Malformed', 'frame: announced length is 0');
  try {
    d.push(frame(payload(1)));
    assert.unreachable('a failed decoder accepted more bytes');
  } catch (e) {
    assert.is(e, err);
  }
});

test('maxFrameBytes must be a usable limit', () => {
  for (const bad of [0, -1, 1.5, 2 ** 32, Number.NaN]) {
    throwsNetwork(() => new FrameDecoder({ maxFrameBytes: bad }), 'Malformed', /^maxFrameBytes must be an integer/);
  }
});

test('seeded random streams cut at random points come back frame for frame', () => {
  const rng = new Prng(9);
  for (let round = 0; round < 200; round++) {
    const ps = Array.from({ length: 1 + rng.int(20) }, () => rng.bytes(1 + rng.int(rng.int(2) ? 50 : 5000)));
    const stream = concat(ps.map(frame));
    const d = new FrameDecoder({ maxFrameBytes: 5000 });
    const out: Uint8Array[] = [];
    for (let at = 0; at < stream.length; ) {
      const n = rng.int(3) === 0 ? 1 : rng.int(3000);
      out.push(...d.push(stream.subarray(at, at + n)));
      at += n;
      assert.ok(d.buffered <= 5000 + FRAME_PREFIX_BYTES);
    }
    assert.equal(hexes(out), hexes(ps), `round ${round}`);
  }
});

test.run();
