import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NodeError } from '@cornice/sdk';
import { createLogger, logLevels } from '../../src/log/logger.js';

const fixed = new Date('2020-05-01T12:34:56.789Z');

function capture(level: Parameters<typeof createLogger>[0]['level'], fields?: Record<string, unknown>) {
  const lines: string[] = [];
  let clockCalls = 0;
  const log = createLogger({
    level,
    write: (line) => lines.push(line),
    clock: () => {
      clockCalls++;
      return fixed;
    },
    ...(fields ? { fields } : {}),
  });
  return {
    log,
    lines,
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    clockCalls: () => clockCalls,
  };
}

test('writes one JSON object per line with time, level, msg first, then fields', () => {
  const c = capture('info');
  c.log.info('server started', { port: 9650, host: '127.0.0.1' });
  assert.is(c.lines.length, 1);
  assert.not.ok(c.lines[0]!.includes('\n'));
  assert.equal(Object.keys(c.records()[0]!), ['time', 'level', 'msg', 'port', 'host']);
  assert.equal(c.records()[0], {
    time: '2020-05-01T12:34:56.789Z',
    level: 'info',
    msg: 'server started',
    port: 9650,
    host: '127.0.0.1',
  });
});

test('every level writes its own name', () => {
  const c = capture('trace');
  c.log.trace('a');
  c.log.debug('b');
  c.log.info('c');
  c.log.warn('d');
  c.log.error('e');
  c.log.fatal('f');
  assert.equal(
    c.records().map((r) => [r.level, r.msg]),
    [
      ['trace', 'a'],
      ['debug', 'b'],
      ['info', 'c'],
      ['warn', 'd'],
      ['error', 'e'],
      ['fatal', 'f'],
    ],
  );
});

test('levels below the configured one are dropped', () => {
  const c = capture('warn');
  c.log.trace('a');
  c.log.debug('b');
  c.log.info('c');
  c.log.warn('d');
  c.log.error('e');
  c.log.fatal('f');
  assert.equal(
    c.records().map((r) => r.level),
    ['warn', 'error', 'fatal'],
  );
});

test('off drops everything', () => {
  const c = capture('off');
  c.log.fatal('x');
  c.log.child({ a: 1 }).error('y');
  assert.is(c.lines.length, 0);
  assert.is(c.clockCalls(), 0);
});

test('disabled levels do no serialization and read no clock', () => {
  const c = capture('info');
  let touched = 0;
  const expensive = {
    get value() {
      touched++;
      return 1;
    },
  };
  c.log.debug('dropped', { expensive });
  c.log.trace('dropped', { expensive });
  c.log.child({ module: 'x' }).debug('dropped', { expensive });
  assert.is(touched, 0);
  assert.is(c.clockCalls(), 0);
  assert.is(c.lines.length, 0);
  c.log.info('kept', { expensive });
  assert.is(touched, 1);
});

test('bigint -> decimal string, Uint8Array and Buffer -> hex, Date -> ISO', () => {
  const c = capture('info');
  c.log.info('values', {
    amount: 18446744073709551615n,
    negative: -5n,
    bytes: new Uint8Array([0, 1, 0xab, 0xff]),
    buf: Buffer.from([0xde, 0xad]),
    when: new Date('2021-01-02T03:04:05.000Z'),
    nested: { list: [1n, new Uint8Array([7])] },
    set: new Set([1, 2]),
    map: new Map([['k', 2n]]),
    nan: Number.NaN,
    nothing: undefined,
    nul: null,
  });
  const r = c.records()[0]!;
  assert.is(r.amount, '18446744073709551615');
  assert.is(r.negative, '-5');
  assert.is(r.bytes, '0001abff');
  assert.is(r.buf, 'dead');
  assert.is(r.when, '2021-01-02T03:04:05.000Z');
  assert.equal(r.nested, { list: ['1', '07'] });
  assert.equal(r.set, [1, 2]);
  assert.equal(r.map, { k: '2' });
  assert.is(r.nan, 'NaN');
  assert.not.ok('nothing' in r);
  assert.is(r.nul, null);
});

test('Error -> {message, code, stack}', () => {
  class TestError extends NodeError<'Broken'> {}
  const c = capture('info');
  const plain = new Error('plain failure');
  c.log.error('failed', { err: new TestError('Broken', 'it broke'), plain });
  const r = c.records()[0]!;
  const err = r.err as Record<string, unknown>;
  assert.is(err.message, 'it broke');
  assert.is(err.code, 'Broken');
  assert.type(err.stack, 'string');
  assert.ok((err.stack as string).includes('it broke'));
  assert.equal(Object.keys(err).sort(), ['code', 'message', 'stack']);
  const p = r.plain as Record<string, unknown>;
  assert.is(p.message, 'plain failure');
  assert.not.ok('code' in p);
});

test('secret-looking field names are redacted at any depth', () => {
  const c = capture('info');
  c.log.info('user', {
    username: 'bob',
    password: 'hunter2',
    pass: 'x',
    passphrase: 'y',
    PrivateKey: 'PrivateKey-abc',
    'private key': 'z',
    privateKey: new Uint8Array([1]),
    private_key: 'q',
    clientSecret: 's',
    seed: 'w',
    mnemonic: 'abandon abandon',
    nested: { user: { password: 'p', name: 'n' } },
    list: [{ secret: 1 }],
  });
  const line = c.lines[0]!;
  for (const s of ['hunter2', 'PrivateKey-abc', 'abandon', '"01"', '"q"', '"w"', '"s"', '"p"']) {
    assert.not.ok(line.includes(s), `leaked ${s}`);
  }
  const r = c.records()[0]!;
  assert.is(r.username, 'bob');
  for (const k of ['password', 'pass', 'passphrase', 'PrivateKey', 'private key', 'privateKey', 'private_key', 'clientSecret', 'seed', 'mnemonic']) {
    assert.is(r[k], '[redacted]', k);
  }
  assert.equal(r.nested, { user: { password: '[redacted]', name: 'n' } });
  assert.equal(r.list, [{ secret: '[redacted]' }]);
});

test('redaction also applies to bound fields', () => {
  const c = capture('info', { password: 'nope', service: 'keystore' });
  c.log.child({ seed: 'nope2', user: 'u' }).info('x');
  const line = c.lines[0]!;
  assert.not.ok(line.includes('nope'));
  assert.equal(c.records()[0], {
    time: fixed.toISOString(),
    level: 'info',
    msg: 'x',
    password: '[redacted]',
    service: 'keystore',
    seed: '[redacted]',
    user: 'u',
  });
});

test('child() merges fields; the parent is unchanged; call fields win', () => {
  const c = capture('debug', { node: 'n1' });
  const chain = c.log.child({ module: 'chains', chain: 'X' });
  const engine = chain.child({ module: 'engine' });
  engine.debug('polled', { chain: 'P' });
  chain.info('created');
  c.log.warn('root');
  const [a, b, d] = c.records();
  assert.equal(a, { time: fixed.toISOString(), level: 'debug', msg: 'polled', node: 'n1', module: 'engine', chain: 'P' });
  assert.equal(b, { time: fixed.toISOString(), level: 'info', msg: 'created', node: 'n1', module: 'chains', chain: 'X' });
  assert.equal(d, { time: fixed.toISOString(), level: 'warn', msg: 'root', node: 'n1' });
});

test('child keeps the level threshold', () => {
  const c = capture('error');
  const child = c.log.child({ module: 'm' });
  child.warn('dropped');
  child.error('kept');
  assert.equal(
    c.records().map((r) => r.msg),
    ['kept'],
  );
});

test('fields cannot overwrite time, level or msg', () => {
  const c = capture('info');
  c.log.info('real', { msg: 'fake', level: 'fatal', time: 'then' });
  const r = c.records()[0]!;
  assert.is(r.msg, 'real');
  assert.is(r.level, 'info');
  assert.is(r.time, fixed.toISOString());
  assert.is(r._msg, 'fake');
  assert.is(r._level, 'fatal');
  assert.is(r._time, 'then');
});

test('cycles and IDs with their own toString', () => {
  class FakeId {
    constructor(readonly bytes: Uint8Array) {}
    toString(): string {
      return 'cb58-ish';
    }
  }
  const c = capture('info');
  const a: Record<string, unknown> = { name: 'a' };
  a.self = a;
  c.log.info('x', { a, id: new FakeId(new Uint8Array([1])) });
  const r = c.records()[0]!;
  assert.equal(r.a, { name: 'a', self: '[circular]' });
  assert.is(r.id, 'cb58-ish');
});

test('a field that throws while serialized does not throw from the logger', () => {
  const c = capture('info');
  const bad = {
    get boom() {
      throw new Error('getter failed');
    },
  };
  c.log.info('x', { bad });
  const r = c.records()[0]!;
  assert.is(r.msg, 'x');
  assert.is(r.logError, 'getter failed');
});

test('default clock writes the current time; logLevels in order', () => {
  const lines: string[] = [];
  const before = Date.now();
  createLogger({ level: 'info', write: (l) => lines.push(l) }).info('now');
  const t = Date.parse((JSON.parse(lines[0]!) as { time: string }).time);
  assert.ok(t >= before && t <= Date.now());
  assert.equal([...logLevels], ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'off']);
});

test.run();
