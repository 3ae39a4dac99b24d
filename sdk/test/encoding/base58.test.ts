import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import bs58 from 'bs58';
import { BASE58_ALPHABET, BS58_MAX_BYTES, BS58_MAX_CHARS, WASM_MAX_BYTES, WASM_MAX_CHARS, base58Decode, base58Encode, base58UsesWasm } from '../../src/encoding/base58.js';
import { BASE58_WASM } from '../../src/encoding/base58-wasm.generated.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { EncodingError } from '../../src/errors/errors.js';

/** Plain BigInt base58, the obvious way: an independent check of the limb-based implementation. */
function slowEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const x of bytes) n = n * 256n + BigInt(x);
  let out = '';
  while (n > 0n) {
    out = BASE58_ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  return '1'.repeat(zeros) + out;
}

// Bitcoin Core's base58 vectors.
const VECTORS: Array<[string, string]> = [
  ['61', '2g'],
  ['626262', 'a3gV'],
  ['636363', 'aPEr'],
  ['73696d706c792061206c6f6e6720737472696e67', '2cFupjhnEsSn59qHXstmK2ffpLv2'],
  ['00eb15231dfceb60925886b67d065299925915aeb172c06647', '1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L'],
  ['516b6fcd0f', 'ABnLTmg'],
  ['bf4f89001e670274dd', '3SEo3LWLoPntC'],
  ['572e4794', '3EFU7m'],
  ['ecac89cad93923c02321', 'EJDM8drfXA6uyA'],
  ['10c8511e', 'Rt5zm'],
  ['00000000000000000000', '1111111111'],
  [
    '000111d38e5fc9071ffcd20b4a763cc9ae4f252bb4e48fd66a835e252ada93ff480d6dd43dc62a641155a5',
    '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
  ],
];

test('known vectors', () => {
  for (const [hex, text] of VECTORS) {
    assert.is(base58Encode(fromHex(hex)), text, hex);
    assert.is(toHex(base58Decode(text)), hex, text);
  }
  assert.is(base58Encode(new TextEncoder().encode('Hello World!')), '2NEpo7TZRRrLZSi2U');
});

test('empty input encodes to the empty string; decoding it is an error', () => {
  assert.is(base58Encode(new Uint8Array()), '');
  assert.throws(() => base58Decode(''), (e: unknown) => e instanceof EncodingError && e.code === 'ZeroLength' && e.message === 'zero length string');
});

test('leading zero bytes <-> leading 1s', () => {
  assert.is(base58Encode(Uint8Array.of(0)), '1');
  assert.is(base58Encode(Uint8Array.of(0, 0, 1)), '112');
  assert.equal(base58Decode('1'), Uint8Array.of(0));
  assert.equal(base58Decode('111'), Uint8Array.of(0, 0, 0));
  assert.equal(base58Decode('112'), Uint8Array.of(0, 0, 1));
  assert.equal(base58Decode('z'), Uint8Array.of(57));
  assert.equal(base58Decode('21'), Uint8Array.of(58));
});

test('random inputs agree with a BigInt implementation and round trip', () => {
  for (let len = 0; len <= 100; len++) {
    for (let k = 0; k < 8; k++) {
      const bytes = randomBytes(len);
      if (k < 3) bytes.fill(0, 0, Math.min(len, k + 1)); // some leading zeros
      if (k === 7) bytes.fill(0xff);
      const plain = new Uint8Array(bytes);
      const text = base58Encode(plain);
      assert.is(text, slowEncode(plain), `len ${len}`);
      if (len > 0) assert.equal(base58Decode(text), plain, `len ${len}`);
    }
  }
});

test('long inputs (divide and conquer) agree with the BigInt implementation and round trip', () => {
  for (const len of [33, 36, 64, 255, 256, 257, 300, 700, 1024, 4099]) {
    for (let k = 0; k < 4; k++) {
      const bytes = new Uint8Array(randomBytes(len));
      if (k === 1) bytes.fill(0, 0, 300); // many leading zeros
      if (k === 2) bytes.fill(0xff);
      if (k === 3) bytes.fill(0, 1, 200); // zeros inside: padded leaves
      const text = base58Encode(bytes);
      assert.is(text, slowEncode(bytes), `len ${len} case ${k}`);
      assert.equal(base58Decode(text), bytes, `len ${len} case ${k}`);
    }
  }
  assert.equal(base58Decode('1'.repeat(1000)), new Uint8Array(1000));
  assert.is(base58Encode(new Uint8Array(1000)), '1'.repeat(1000));
});

/** Plain BigInt decoding, the obvious way: an independent check of the WebAssembly and divide-and-conquer paths. */
function slowDecode(text: string): Uint8Array {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  let n = 0n;
  for (const c of text) n = n * 58n + BigInt(BASE58_ALPHABET.indexOf(c));
  const body: number[] = [];
  for (; n > 0n; n >>= 8n) body.unshift(Number(n & 0xffn));
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body]);
}

test('mid-length input decodes through WebAssembly, agreeing with plain BigInt on every length up to its bound and past it', () => {
  assert.ok(base58UsesWasm, 'WebAssembly is available in node: the module must load');
  const lengths = new Set<number>();
  for (let len = BS58_MAX_CHARS + 1; len <= 80; len++) lengths.add(len);
  for (const len of [99, 100, 101, 255, 256, 430, 431, 1000, WASM_MAX_CHARS - 1, WASM_MAX_CHARS, WASM_MAX_CHARS + 1]) lengths.add(len);
  for (const len of lengths) {
    for (let k = 0; k < 4; k++) {
      // Random digits; some with leading 1s (zero bytes), some all 'z' (every limb full), one a single nonzero digit after 1s.
      let text = Array.from(randomBytes(len), (b) => BASE58_ALPHABET[b % 58]).join('');
      if (k === 1) text = '1'.repeat(Math.min(len - 1, 40)) + text.slice(Math.min(len - 1, 40));
      if (k === 2) text = 'z'.repeat(len);
      if (k === 3) text = '1'.repeat(len - 1) + '2';
      assert.equal(base58Decode(text), slowDecode(text), `len ${len} case ${k}`);
    }
  }
  assert.equal(base58Decode('1'.repeat(WASM_MAX_CHARS)), new Uint8Array(WASM_MAX_CHARS));
});

test('mid-length bytes encode through WebAssembly, agreeing with plain BigInt around its bound', () => {
  for (const len of [BS58_MAX_BYTES + 1, 36, 37, 38, 39, 100, 200, WASM_MAX_BYTES - 1, WASM_MAX_BYTES, WASM_MAX_BYTES + 1]) {
    for (let k = 0; k < 4; k++) {
      const bytes = new Uint8Array(randomBytes(len));
      if (k === 1) bytes.fill(0, 0, 5); // leading zeros: leading 1s
      if (k === 2) bytes.fill(0xff);
      if (k === 3) bytes.fill(0, 0, len - 1); // one nonzero byte: a single short top limb
      const text = base58Encode(bytes);
      assert.is(text, slowEncode(bytes), `len ${len} case ${k}`);
      assert.equal(base58Decode(text), bytes, `len ${len} case ${k}`);
    }
  }
});

test('without WebAssembly (node --jitless) the same values come out of BigInt', () => {
  const bytes = new Uint8Array(randomBytes(300));
  const id = new Uint8Array(randomBytes(36));
  const script = `
    const m = await import(${JSON.stringify(new URL('../../src/encoding/base58.js', import.meta.url).href)});
    const [bytes, id] = ${JSON.stringify([Array.from(bytes), Array.from(id)])}.map((a) => Uint8Array.from(a));
    const text = m.base58Encode(bytes);
    console.log(JSON.stringify({ wasm: m.base58UsesWasm, text, id: m.base58Encode(id), back: Array.from(m.base58Decode(text)) }));`;
  const out = execFileSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const r = JSON.parse(out) as { wasm: boolean; text: string; id: string; back: number[] };
  assert.is(r.wasm, false);
  assert.is(r.text, base58Encode(bytes));
  assert.is(r.id, base58Encode(id));
  assert.equal(Uint8Array.from(r.back), bytes);
});

test('the committed WebAssembly bytes are base58.wat compiled (run scripts/build-base58-wasm.mjs after editing it)', async () => {
  const { compileBase58Wat } = (await import(new URL('../../../../scripts/build-base58-wasm.mjs', import.meta.url).href)) as { compileBase58Wat: () => Promise<string> };
  assert.is(await compileBase58Wat(), BASE58_WASM);
});

test('long inputs cost far less than quadratic time', () => {
  const bytes = new Uint8Array(randomBytes(256 * 1024));
  const t0 = performance.now();
  const text = base58Encode(bytes);
  const t1 = performance.now();
  assert.equal(base58Decode(text), bytes);
  const t2 = performance.now();
  // Limbs alone took ~30 s to encode and ~25 s to decode this; divide and conquer ~0.5 s and ~0.1 s.
  assert.ok(t1 - t0 < 4000, `encode took ${(t1 - t0).toFixed(0)} ms`);
  assert.ok(t2 - t1 < 2000, `decode took ${(t2 - t1).toFixed(0)} ms`);
});

test('short inputs are bs58 (pinned exactly); both paths agree with it at the bound', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
  assert.match(pkg.dependencies.bs58 ?? '', /^\d+\.\d+\.\d+$/);
  for (const len of [1, 32, BS58_MAX_BYTES - 1, BS58_MAX_BYTES, BS58_MAX_BYTES + 1, 400]) {
    const bytes = new Uint8Array(randomBytes(len));
    const text = bs58.encode(bytes);
    assert.is(base58Encode(bytes), text, `len ${len}`);
    assert.equal(base58Decode(text), bytes, `len ${len}`);
  }
  // The character bound covers the byte bound: a BS58_MAX_BYTES payload never reaches BigInt to decode.
  assert.ok(base58Encode(new Uint8Array(BS58_MAX_BYTES).fill(0xff)).length <= BS58_MAX_CHARS);
});

test('invalid digits are reported like mr-tron/base58', () => {
  const bad: Array<[string, string]> = [
    ['0', "Invalid base58 digit ('0')"],
    ['abcO', "Invalid base58 digit ('O')"],
    ['I', "Invalid base58 digit ('I')"],
    ['2l', "Invalid base58 digit ('l')"],
    ['1 2', "Invalid base58 digit (' ')"],
    ['+', "Invalid base58 digit ('+')"],
    ["'", "Invalid base58 digit ('\\'')"],
    ['\n', "Invalid base58 digit ('\\n')"],
    ['\u0000', "Invalid base58 digit ('\\x00')"],
    ['2é', 'High-bit set on invalid digit'],
  ];
  // In a long input too: the first bad character is named.
  bad.push(['2'.repeat(5000) + '0' + 'O'.repeat(10), "Invalid base58 digit ('0')"], ['z'.repeat(900) + 'é' + '0', 'High-bit set on invalid digit']);
  // Through WebAssembly's length range too, after leading 1s and at its last character.
  bad.push(['1'.repeat(30) + 'z'.repeat(100) + 'l', "Invalid base58 digit ('l')"], ['2'.repeat(WASM_MAX_CHARS - 1) + '0', "Invalid base58 digit ('0')"]);
  for (const [input, message] of bad) {
    try {
      base58Decode(input);
      assert.unreachable(`${JSON.stringify(input)} should not decode`);
    } catch (e) {
      assert.instance(e, EncodingError);
      assert.is((e as EncodingError).code, 'InvalidDigit');
      assert.is((e as Error).message, message);
    }
  }
});

test.run();
