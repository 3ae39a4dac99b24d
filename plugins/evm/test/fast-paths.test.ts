import { Common, Hardfork } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import { bigIntToBytes, bytesToBigInt, bytesToHex, createAddressFromString, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainCommon } from '../src/chain/executor.js';
import { fastMload, fastMstore, installFastOpcodes, withFastEipLookup, wordBytes, wordOf } from '../src/chain/patches/fast-paths.js';

const MAX = (1n << 256n) - 1n;
/** Edge words and a spread of widths (1 to 256 bits). */
const WORDS = [0n, 1n, 0xffn, 0x100n, (1n << 64n) - 1n, 1n << 64n, (1n << 128n) + 7n, 1n << 192n, MAX, MAX - 1n];
for (let bits = 1n; bits <= 256n; bits += 13n) WORDS.push((1n << bits) - 3n > 0n ? (1n << bits) - 3n : 1n, ((1n << bits) / 3n) | 1n);

test('a word to 32 bytes and back matches @ethereumjs\' conversions', () => {
  for (const w of WORDS) {
    const stock = setLengthLeft(bigIntToBytes(w), 32);
    assert.equal(bytesToHex(wordBytes(w)), bytesToHex(stock), `word ${w}`);
    assert.is(wordOf(stock), bytesToBigInt(stock), `word ${w}`);
    const shifted = new Uint8Array(40);
    shifted.set(stock, 5);
    assert.is(wordOf(shifted.subarray(5, 37)), w, 'a view at an offset');
  }
});

test('EVMs made after the install run MSTORE and MLOAD with the fast handlers, with the same results and gas', async () => {
  assert.ok(await installFastOpcodes());
  const evm = await createEVM({ common: chainCommon(43110n) });
  const handlers = (evm as unknown as { _handlers: Map<number, unknown> })._handlers;
  assert.is(handlers.get(0x52), fastMstore);
  assert.is(handlers.get(0x51), fastMload);
  const caller = createAddressFromString('0x8db97C7cEcE249c2b98bDC0226Cc4C2A57BF52FC');
  for (const [w, at] of [[MAX, 0], [0x1234n, 1], [1n << 200n, 33], [MAX - 5n, 100]] as const) {
    const hex = w.toString(16).padStart(64, '0');
    const off = at.toString(16).padStart(2, '0');
    // PUSH32 w; PUSH1 at; MSTORE; PUSH1 at; MLOAD; PUSH1 0xe0; MSTORE; PUSH1 0x20; PUSH1 0xe0; RETURN
    const code = hexToBytes(`0x7f${hex}60${off}5260${off}5160e052602060e0f3`);
    const r = await evm.runCall({ caller, data: code, gasLimit: 100_000n });
    assert.is(r.execResult.exceptionError, undefined, `word ${w} at ${at}`);
    // A CREATE's init code returns the deployed code: the word read back by MLOAD.
    const deployed = await evm.stateManager.getCode(r.createdAddress!);
    assert.equal(bytesToHex(deployed), `0x${hex}`, `word ${w} at ${at}`);
    // Gas as the yellow paper gives it: 5 pushes and RETURN, memory to 0x100 words, MSTORE/MLOAD 3 each, code deposit.
    const memWords = 8n;
    const memGas = 3n * memWords + (memWords * memWords) / 512n;
    assert.is(r.execResult.executionGasUsed, 3n * 6n + 3n * 3n + memGas + 200n * 32n, `gas, word ${w} at ${at}`);
  }
});

test('isActivatedEIP answers as Common does, and follows a hardfork change and a copy', () => {
  const stock = (c: Common, eip: number) => Common.prototype.isActivatedEIP.call(c, eip);
  const c = withFastEipLookup(chainCommon(43110n));
  assert.is.not(c.isActivatedEIP, Common.prototype.isActivatedEIP);
  const same = (x: Common, label: string) => {
    for (let eip = 0; eip <= 10_000; eip++) assert.is(x.isActivatedEIP(eip), stock(x, eip), `${label}: EIP ${eip}`);
  };
  same(c, 'cancun');
  assert.ok(c.isActivatedEIP(1153) && c.isActivatedEIP(2929) && !c.isActivatedEIP(6800));
  const copy = c.copy();
  copy.setHardfork(Hardfork.Berlin);
  same(copy, 'berlin copy');
  assert.not.ok(copy.isActivatedEIP(1559), 'london is not active at berlin');
  assert.ok(c.isActivatedEIP(1559), 'the original is unchanged');
  c.setHardfork(Hardfork.London);
  same(c, 'london');
  assert.not.ok(c.isActivatedEIP(1153));
});

test.run();
