import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import {
  checksumAddress,
  eventTopic,
  FEE_CONFIG_CHANGED_TOPIC,
  FEE_RECIPIENTS_ALLOWED_TOPIC,
  NATIVE_COIN_MINTED_TOPIC,
  readWords,
  REWARD_ADDRESS_CHANGED_TOPIC,
  REWARDS_DISABLED_TOPIC,
  ROLE_SET_TOPIC,
  selector,
  uint256Word,
  wordToAddress,
  wordToBigint,
} from '../src/index.js';

test('selectors are those of A.5', () => {
  const expected: Record<string, string> = {
    'setAdmin(address)': '704b6c02',
    'setEnabled(address)': '0aaf7043',
    'setManager(address)': 'd0ebdbe7',
    'setNone(address)': '8c6bfb3b',
    'readAllowList(address)': 'eb54dae1',
    'mintNativeCoin(address,uint256)': '4f5aaaba',
    'setFeeConfig(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)': '8f10b586',
    'getFeeConfig()': '5fbbc0d2',
    'getFeeConfigLastChangedAt()': '9e05549a',
    'setRewardAddress(address)': '5e00e679',
    'allowFeeRecipients()': '0329099f',
    'disableRewards()': 'bc178628',
    'currentRewardAddress()': 'e915608b',
    'areFeeRecipientsAllowed()': 'f6542b2e',
  };
  for (const [sig, sel] of Object.entries(expected)) assert.is(toHex(selector(sig)), sel, sig);
});

test('event topics are those of A.5', () => {
  const cases: Array<[Uint8Array, string, string]> = [
    [ROLE_SET_TOPIC, 'cdb7ea01', 'be3e'],
    [NATIVE_COIN_MINTED_TOPIC, '400cd392', '30ee'],
    [FEE_CONFIG_CHANGED_TOPIC, '4c98e43a', '44fc'],
    [REWARD_ADDRESS_CHANGED_TOPIC, 'c2a9e07c', '2a6c'],
    [FEE_RECIPIENTS_ALLOWED_TOPIC, 'abb1949b', '5991'],
    [REWARDS_DISABLED_TOPIC, 'eb121f03', 'fabf'],
  ];
  for (const [topic, head, tail] of cases) {
    const h = toHex(topic);
    assert.is(topic.length, 32);
    assert.ok(h.startsWith(head) && h.endsWith(tail), h);
  }
  // keccak256 of the empty string, the usual check of the hash itself.
  assert.is(toHex(eventTopic('')), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
});

test('checksumAddress follows EIP-55 (the spec vectors), as Go prints an address', () => {
  for (const a of [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    '0x8db97C7cEcE249c2b98bDC0226Cc4C2A57BF52FC',
  ]) {
    assert.is(checksumAddress(fromHex(a)), a);
  }
});

test('words: uint256 round trip and range, address from the low 20 bytes', () => {
  const max = (1n << 256n) - 1n;
  assert.is(wordToBigint(uint256Word(max)), max);
  assert.is(wordToBigint(uint256Word(0x1234n)), 0x1234n);
  // Around the 6-byte fast path, and unpadded words.
  for (const v of [0n, 1n, 2n ** 48n - 1n, 2n ** 48n, 2n ** 56n + 3n, 2n ** 200n + 5n]) assert.is(wordToBigint(uint256Word(v)), v);
  assert.is(wordToBigint(new Uint8Array()), 0n);
  assert.is(wordToBigint(Uint8Array.of(1, 0, 0, 0, 0, 0, 0)), 2n ** 48n);
  assert.throws(() => uint256Word(-1n));
  assert.throws(() => uint256Word(max + 1n));
  const w = new Uint8Array(32).fill(0xff);
  assert.is(toHex(wordToAddress(w)), 'ff'.repeat(20));
});

test("readWords fails as go-ethereum's unpacker: empty input, a short word; extra bytes ignored", () => {
  assert.throws(() => readWords(new Uint8Array(0), 1), (e: Error) => e.message === 'abi: attempting to unmarshall an empty string while arguments are expected');
  assert.throws(() => readWords(new Uint8Array(31), 1), (e: Error) => e.message === 'abi: cannot marshal in to go type: length insufficient 31 require 32');
  assert.throws(() => readWords(new Uint8Array(40), 2), (e: Error) => e.message === 'abi: cannot marshal in to go type: length insufficient 40 require 64');
  assert.is(readWords(new Uint8Array(70), 2).length, 2);
  assert.equal(readWords(new Uint8Array(0), 0), []);
});

test.run();
