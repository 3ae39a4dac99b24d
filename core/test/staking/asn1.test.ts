import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  Asn1Error,
  bitString,
  boolean,
  encodeLength,
  explicit,
  generalizedTime,
  integer,
  nullValue,
  octetString,
  oid,
  printableString,
  sequence,
  set,
  time,
  utcTime,
  utf8String,
} from '../../src/staking/asn1.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const ascii = (s: string): string => Buffer.from(s, 'latin1').toString('hex');

test('lengths: short and long form', () => {
  assert.is(hex(encodeLength(0)), '00');
  assert.is(hex(encodeLength(127)), '7f');
  assert.is(hex(encodeLength(128)), '8180');
  assert.is(hex(encodeLength(255)), '81ff');
  assert.is(hex(encodeLength(256)), '820100');
  assert.is(hex(encodeLength(70000)), '83011170');
  assert.is(hex(octetString(new Uint8Array(300))).slice(0, 8), '0482012c');
  assert.throws(() => encodeLength(-1), (e: unknown) => e instanceof Asn1Error);
});

test('INTEGER: minimal two\'s complement', () => {
  const cases: [bigint | number, string][] = [
    [0, '020100'],
    [1, '020101'],
    [127, '02017f'],
    [128, '02020080'],
    [255, '020200ff'],
    [256, '02020100'],
    [-1, '0201ff'],
    [-128, '020180'],
    [-129, '0202ff7f'],
    [-256, '0202ff00'],
    [2n ** 64n, '0209010000000000000000'],
    [-(2n ** 63n), '02088000000000000000'],
  ];
  for (const [v, want] of cases) assert.is(hex(integer(v)), want, String(v));
  assert.throws(() => integer(0.5), (e: unknown) => e instanceof Asn1Error);
});

test('INTEGER from unsigned bytes', () => {
  assert.is(hex(integer(Uint8Array.of(0x01, 0x02))), '02020102');
  assert.is(hex(integer(Uint8Array.of(0x80))), '02020080');
  assert.is(hex(integer(Uint8Array.of(0, 0, 0x7f))), '02017f');
  assert.is(hex(integer(Uint8Array.of(0, 0, 0x80))), '02020080');
  assert.is(hex(integer(Uint8Array.of(0, 0))), '020100');
  assert.is(hex(integer(new Uint8Array(0))), '020100');
});

test('OBJECT IDENTIFIER', () => {
  assert.is(hex(oid('2.5.4.3')), '0603550403');
  assert.is(hex(oid('1.2.840.113549')), '06062a864886f70d');
  assert.is(hex(oid('1.2.840.10045.4.3.2')), '06082a8648ce3d040302');
  assert.is(hex(oid('1.2.840.10045.3.1.7')), '06082a8648ce3d030107');
  assert.is(hex(oid('2.999.3')), '0603883703');
  for (const bad of ['', '1', '1.', 'a.b', '3.1', '1.40', '1..2']) {
    assert.throws(() => oid(bad), (e: unknown) => e instanceof Asn1Error, bad);
  }
});

test('strings, BIT STRING, OCTET STRING, BOOLEAN, NULL', () => {
  assert.is(hex(utf8String('cornice')), '0c07' + ascii('cornice'));
  assert.is(hex(utf8String('é')), '0c02c3a9');
  assert.is(hex(printableString('US')), '13025553');
  assert.throws(() => printableString('a@b'), (e: unknown) => e instanceof Asn1Error);
  assert.is(hex(bitString(Uint8Array.of(0xab))), '030200ab');
  assert.is(hex(bitString(Uint8Array.of(0x80), 7)), '03020780');
  assert.throws(() => bitString(Uint8Array.of(1), 8), (e: unknown) => e instanceof Asn1Error);
  assert.is(hex(octetString(Uint8Array.of(1, 2))), '04020102');
  assert.is(hex(boolean(true)), '0101ff');
  assert.is(hex(boolean(false)), '010100');
  assert.is(hex(nullValue()), '0500');
});

test('SEQUENCE, SET (DER-sorted), explicit tags', () => {
  assert.is(hex(sequence()), '3000');
  assert.is(hex(sequence(integer(1), boolean(true))), '30060201010101ff');
  assert.is(hex(set(integer(2), integer(1))), '3106020101020102');
  assert.is(hex(set(octetString(Uint8Array.of(1, 2)), integer(1))), '310702010104020102');
  assert.is(hex(explicit(0, integer(2))), 'a003020102');
  assert.is(hex(explicit(3, sequence())), 'a3023000');
  assert.throws(() => explicit(31, sequence()), (e: unknown) => e instanceof Asn1Error);
});

test('times: UTCTime for 1950-2049, GeneralizedTime otherwise', () => {
  const d2049 = new Date('2049-12-31T23:59:59.999Z');
  assert.is(hex(utcTime(d2049)), '170d' + ascii('491231235959Z'));
  assert.is(hex(time(d2049)), '170d' + ascii('491231235959Z'));
  const d1950 = new Date('1950-01-01T00:00:00Z');
  assert.is(hex(time(d1950)), '170d' + ascii('500101000000Z'));
  const d2050 = new Date('2050-01-01T00:00:00Z');
  assert.is(hex(time(d2050)), '180f' + ascii('20500101000000Z'));
  assert.is(hex(generalizedTime(d2050)), '180f' + ascii('20500101000000Z'));
  const d1949 = new Date('1949-06-15T12:30:45Z');
  assert.is(hex(time(d1949)), '180f' + ascii('19490615123045Z'));
  assert.is(hex(time(new Date('2120-03-04T05:06:07Z'))), '180f' + ascii('21200304050607Z'));
  assert.throws(() => utcTime(d2050), (e: unknown) => e instanceof Asn1Error);
  assert.throws(() => time(new Date(Number.NaN)), (e: unknown) => e instanceof Asn1Error);
});

test.run();
