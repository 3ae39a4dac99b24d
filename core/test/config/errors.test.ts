import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NodeError } from '@cornice/sdk';
import { ConfigError } from '../../src/config/config.js';
import { parseConfig, type ParseOptions } from '../../src/config/parse.js';

function files(map: Record<string, string>): (path: string) => string {
  return (path) => {
    const text = map[path];
    if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    return text;
  };
}

function fails(
  argv: string[],
  message: string,
  code: string,
  env: Record<string, string | undefined> = {},
  opts: ParseOptions = {},
): void {
  try {
    parseConfig(argv, env, { homedir: '/home/op', readFile: files({}), ...opts });
  } catch (err) {
    assert.instance(err, ConfigError);
    assert.instance(err, NodeError);
    const e = err as ConfigError;
    assert.is(e.message, message);
    assert.is(e.code, code);
    return;
  }
  assert.unreachable(`expected an error: ${message}`);
}

test('unknown flags', () => {
  fails(['--htp-port=1'], 'unknown flag --htp-port (see cornice --help)', 'UnknownFlag');
  fails(['--htp-port', '1'], 'unknown flag --htp-port (see cornice --help)', 'UnknownFlag');
  fails(['-h'], 'unknown flag -h (see cornice --help)', 'UnknownFlag');
  fails(['-http-port=1'], 'unknown flag -http-port (see cornice --help)', 'UnknownFlag');
});

test('unexpected arguments', () => {
  fails(['run'], 'unexpected argument "run" (see cornice --help)', 'UnexpectedArgument');
  fails(['--api-ipcs-enabled', 'false'], 'unexpected argument "false" (see cornice --help)', 'UnexpectedArgument');
  fails(['--'], 'unexpected argument "--" (see cornice --help)', 'UnexpectedArgument');
});

test('missing values', () => {
  fails(['--http-port'], 'missing value for --http-port', 'MissingValue');
  fails(['--http-port', '--http-host=x'], 'missing value for --http-port', 'MissingValue');
  fails(['--http-port='], 'missing value for --http-port', 'MissingValue');
  fails(['--data-dir'], 'missing value for --data-dir', 'MissingValue');
  fails(['--config-file'], 'missing value for --config-file', 'MissingValue');
});

test('invalid command-line values name the flag and what was expected', () => {
  const port = 'expected an integer from 0 to 65535';
  fails(['--http-port=abc'], `invalid value "abc" for --http-port: ${port}`, 'InvalidValue');
  fails(['--http-port', '65536'], `invalid value "65536" for --http-port: ${port}`, 'InvalidValue');
  fails(['--http-port=-1'], `invalid value "-1" for --http-port: ${port}`, 'InvalidValue');
  fails(['--http-port=1.5'], `invalid value "1.5" for --http-port: ${port}`, 'InvalidValue');
  fails(['--http-port=0x10'], `invalid value "0x10" for --http-port: ${port}`, 'InvalidValue');
  fails(['--http-port= 1'], `invalid value " 1" for --http-port: ${port}`, 'InvalidValue');
  fails(
    ['--http-max-body-bytes=0'],
    'invalid value "0" for --http-max-body-bytes: expected an integer from 1 to 4294967295',
    'InvalidValue',
  );
  fails(
    ['--http-max-batch-size=0'],
    'invalid value "0" for --http-max-batch-size: expected an integer from 1 to 4294967295',
    'InvalidValue',
  );
  fails(['--api-admin-enabled=yes'], 'invalid value "yes" for --api-admin-enabled: expected true or false', 'InvalidValue');
  fails(['--db-type=rocksdb'], 'invalid value "rocksdb" for --db-type: expected one of leveldb, memory', 'InvalidValue');
  fails(
    ['--log-level=verbose'],
    'invalid value "verbose" for --log-level: expected one of trace, debug, info, warn, error, fatal, off',
    'InvalidValue',
  );
  const net = 'expected mainnet, cascade, denali, testnet, local, network-<n> or an integer from 0 to 4294967295';
  fails(['--network-id=moon'], `invalid value "moon" for --network-id: ${net}`, 'InvalidValue');
  fails(['--network-id=4294967296'], `invalid value "4294967296" for --network-id: ${net}`, 'InvalidValue');
  fails(['--network-id=network-'], `invalid value "network-" for --network-id: ${net}`, 'InvalidValue');
  fails(['--network-id=network-x'], `invalid value "network-x" for --network-id: ${net}`, 'InvalidValue');
  fails(['--network-id=-1'], `invalid value "-1" for --network-id: ${net}`, 'InvalidValue');
  fails(['--help=maybe'], 'invalid value "maybe" for --help: expected true or false', 'InvalidValue');
});

test('network flags: bootstrap addresses and IDs are checked item by item and must pair up; the public IP is an IP', () => {
  fails(
    ['--bootstrap-ips=127.0.0.1:9651,localhost:9651'],
    'invalid value "127.0.0.1:9651,localhost:9651" for --bootstrap-ips: expected staking addresses such as 127.0.0.1:9651 or [::1]:9651 (got "localhost:9651")',
    'InvalidValue',
  );
  fails(['--bootstrap-ips=10.0.0.1:0'], 'invalid value "10.0.0.1:0" for --bootstrap-ips: expected staking addresses such as 127.0.0.1:9651 or [::1]:9651 (got "10.0.0.1:0")', 'InvalidValue');
  fails(
    ['--bootstrap-ids=LHgqGqV1QYBuyTywXEvmswXme3iH8myRY,nope'],
    'invalid value "LHgqGqV1QYBuyTywXEvmswXme3iH8myRY,nope" for --bootstrap-ids: expected node IDs such as LHgqGqV1QYBuyTywXEvmswXme3iH8myRY (got "nope")',
    'InvalidValue',
  );
  fails(
    ['--bootstrap-ips=127.0.0.1:9651,[::1]:9653', '--bootstrap-ids=LHgqGqV1QYBuyTywXEvmswXme3iH8myRY'],
    '--bootstrap-ips names 2 node(s) but --bootstrap-ids 1: give one node ID per address, in the same order',
    'InvalidValue',
  );
  fails(['--public-ip=node.example'], 'invalid value "node.example" for --public-ip: expected an IPv4 or IPv6 address (got "node.example")', 'InvalidValue');
  fails(['--staking-port=65536'], 'invalid value "65536" for --staking-port: expected an integer from 0 to 65535', 'InvalidValue');
  const ok = parseConfig(['--bootstrap-ips=127.0.0.1:9651,[::1]:9653', '--bootstrap-ids=LHgqGqV1QYBuyTywXEvmswXme3iH8myRY,NodeID-BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7', '--public-ip=203.0.113.7'], {}, { homedir: '/home/op', readFile: files({}) });
  assert.ok(ok.kind === 'run' && ok.config.bootstrapIds.length === 2 && ok.config.publicIp === '203.0.113.7');
});

test('allowed origins and hosts are checked item by item', () => {
  fails(
    ['--http-allowed-origins=https://ok.example,evil.example'],
    'invalid value "https://ok.example,evil.example" for --http-allowed-origins: expected origins such as https://app.example or http://localhost:3000, or * (got "evil.example")',
    'InvalidValue',
  );
  fails(
    ['--http-allowed-hosts=localhost,node.example:9650'],
    'invalid value "localhost,node.example:9650" for --http-allowed-hosts: expected host names or IP addresses such as localhost or node.example, or * (got "node.example:9650")',
    'InvalidValue',
  );
  fails(['--http-max-connections=0'], 'invalid value "0" for --http-max-connections: expected an integer from 1 to 1000000', 'InvalidValue');
  fails(['--profile-max-files=0'], 'invalid value "0" for --profile-max-files: expected an integer from 1 to 10000', 'InvalidValue');
});

test('invalid environment values name the variable', () => {
  fails(
    [],
    'invalid value "abc" for CORNICE_HTTP_PORT: expected an integer from 0 to 65535',
    'InvalidValue',
    { CORNICE_HTTP_PORT: 'abc' },
  );
  fails([], 'invalid value "nah" for CORNICE_API_IPCS_ENABLED: expected true or false', 'InvalidValue', {
    CORNICE_API_IPCS_ENABLED: 'nah',
  });
});

test('an invalid environment value is an error even when the command line sets the flag', () => {
  // Every source is checked, so a broken environment is never silently ignored.
  fails(['--http-port=1'], 'invalid value "abc" for CORNICE_HTTP_PORT: expected an integer from 0 to 65535', 'InvalidValue', {
    CORNICE_HTTP_PORT: 'abc',
  });
});

test('config file errors', () => {
  const with_ = (text: string): ParseOptions => ({ readFile: files({ '/x.json': text }) });
  fails(['--config-file=/x.json'], 'config file /x.json: unknown key "foo"', 'UnknownKey', {}, with_('{"foo": 1}'));
  fails(['--config-file=/x.json'], 'config file /x.json: unknown key "--http-port"', 'UnknownKey', {}, with_('{"--http-port": 1}'));
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: key "config-file" cannot be set in a config file',
    'UnknownKey',
    {},
    with_('{"config-file": "/y.json"}'),
  );
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: key "help" cannot be set in a config file',
    'UnknownKey',
    {},
    with_('{"help": true}'),
  );
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: invalid value "9652" for "http-port": expected an integer from 0 to 65535',
    'InvalidValue',
    {},
    with_('{"http-port": "9652"}'),
  );
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: invalid value 70000 for "http-port": expected an integer from 0 to 65535',
    'InvalidValue',
    {},
    with_('{"http-port": 70000}'),
  );
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: invalid value "true" for "api-admin-enabled": expected true or false',
    'InvalidValue',
    {},
    with_('{"api-admin-enabled": "true"}'),
  );
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: invalid value null for "data-dir": expected a non-empty path',
    'InvalidValue',
    {},
    with_('{"data-dir": null}'),
  );
  fails(
    ['--config-file=/x.json'],
    'config file /x.json: invalid value 1.5 for "network-id": expected mainnet, cascade, denali, testnet, local, network-<n> or an integer from 0 to 4294967295',
    'InvalidValue',
    {},
    with_('{"network-id": 1.5}'),
  );
  fails(['--config-file=/x.json'], 'config file /x.json: expected a JSON object', 'ConfigFileInvalid', {}, with_('[1]'));
  fails(['--config-file=/x.json'], 'config file /x.json: expected a JSON object', 'ConfigFileInvalid', {}, with_('null'));
  try {
    parseConfig(['--config-file=/x.json'], {}, with_('{"http-port": '));
    assert.unreachable();
  } catch (err) {
    assert.instance(err, ConfigError);
    assert.is((err as ConfigError).code, 'ConfigFileInvalid');
    assert.match((err as ConfigError).message, /^config file \/x\.json: invalid JSON: /);
  }
});

test('unreadable config file', () => {
  fails(
    ['--config-file=/x.json'],
    "cannot read config file /x.json: ENOENT: no such file or directory, open '/x.json'",
    'ConfigFileUnreadable',
  );
  // The real file system, through the default readFile.
  try {
    parseConfig(['--config-file=/nonexistent-cornice-dir/x.json'], {}, { homedir: '/home/op' });
    assert.unreachable();
  } catch (err) {
    assert.instance(err, ConfigError);
    assert.is((err as ConfigError).code, 'ConfigFileUnreadable');
    assert.match((err as ConfigError).message, /^cannot read config file \/nonexistent-cornice-dir\/x\.json: ENOENT/);
  }
});

test('errors carry machine-readable data', () => {
  try {
    parseConfig(['--http-port=x'], {}, { homedir: '/h' });
    assert.unreachable();
  } catch (err) {
    assert.equal((err as ConfigError).data, { flag: 'http-port', source: 'cli' });
  }
});

test.run();
