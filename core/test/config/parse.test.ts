import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeConfig } from '../../src/config/config.js';
import { parseConfig, type ParseOptions } from '../../src/config/parse.js';

const home = '/home/op';

function files(map: Record<string, string>): (path: string) => string {
  return (path) => {
    const text = map[path];
    if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    return text;
  };
}

function run(argv: string[], env: Record<string, string | undefined> = {}, opts: ParseOptions = {}): NodeConfig {
  const r = parseConfig(argv, env, { homedir: home, readFile: files({}), ...opts });
  if (r.kind !== 'run') throw new Error(`expected run, got ${r.kind}`);
  return r.config;
}

test('defaults', () => {
  assert.equal(run([]), {
    configFile: undefined,
    networkId: 12345,
    networkName: 'local',
    httpHost: '127.0.0.1',
    httpPort: 9650,
    httpMaxBodyBytes: 1048576,
    httpMaxBatchSize: 100,
    httpAllowedOrigins: [],
    httpAllowedHosts: ['localhost', '127.0.0.1', '::1'],
    httpMaxConnections: 1024,
    httpMaxJsonDepth: 64,
    httpWriteTimeout: 10_000,
    httpMaxBufferedBytes: 64 * 1024 * 1024,
    httpWsPingInterval: 30_000,
    httpWsIdleTimeout: 600_000,
    dataDir: '/home/op/.cornice',
    dbDir: '/home/op/.cornice/db/local',
    dbType: 'leveldb',
    logLevel: 'info',
    apiAdminEnabled: true,
    apiAdminMaxAliases: 64,
    apiKeystoreEnabled: true,
    apiKeystoreListUsersEnabled: false,
    apiIpcsEnabled: false,
    apiHealthEnabled: true,
    apiMetricsEnabled: true,
    evmDebugApi: false,
    stakingTlsCertFile: '/home/op/.cornice/staking/staker.crt',
    stakingTlsKeyFile: '/home/op/.cornice/staking/staker.key',
    stakingHost: '',
    stakingPort: 9651,
    publicIp: undefined,
    bootstrapIps: [],
    bootstrapIds: [],
    networkInboundConnectionBurst: 16,
    networkInboundConnectionCooldown: 1_000,
    networkMaxHandshakingConnections: 64,
    networkHandshakeTimeout: 10_000,
    networkAtLargeBusyShare: 0.25,
    networkAtLargeMaxRequestsInProgress: 8,
    networkAtLargeReplyBytesPerSecond: 1024 * 1024,
    networkValidatorReplyBytesPerSecond: 32 * 1024 * 1024,
    profileDir: '/home/op/.cornice/profiles',
    profileMaxFiles: 5,
    profileHeapSnapshotEnabled: false,
    snowSampleSize: 20,
    snowQuorumSize: 15,
    snowVirtuousCommitThreshold: 20,
    snowRogueCommitThreshold: 30,
    snowConcurrentRepolls: 4,
    snowMaxTimeProcessing: 120_000,
    sybilProtectionEnabled: true,
    networkInitialTimeout: 5_000,
    networkMinimumTimeout: 2_000,
    networkMaximumTimeout: 10_000,
    networkTimeoutCoefficient: 2,
    networkTimeoutHalflife: 300_000,
    benchlistFailThreshold: 10,
    benchlistMinFailingDuration: 150_000,
    benchlistDuration: 900_000,
    vmCallTimeout: 30_000,
    vmIsolation: [],
    shutdownTimeout: 10_000,
    vms: undefined,
    pluginDir: '/home/op/.cornice/plugins',
    chainConfigDir: '/home/op/.cornice/configs/chains',
    vmAliasesFile: undefined,
    genesisFile: undefined,
    ipcsPath: tmpdir(),
  });
});

test('durations: avalanchego style (2m30s, 500ms, 1.5s) or bare milliseconds; bounds checked', () => {
  assert.is(run(['--benchlist-min-failing-duration=2m30s']).benchlistMinFailingDuration, 150_000);
  assert.is(run(['--network-minimum-timeout=500ms', '--network-initial-timeout=1.5s']).networkInitialTimeout, 1_500);
  assert.is(run(['--vm-call-timeout=1h']).vmCallTimeout, 3_600_000);
  assert.is(run(['--vm-call-timeout=250']).vmCallTimeout, 250);
  const fromFile = run(['--config-file=/c.json'], {}, { readFile: files({ '/c.json': '{"vm-call-timeout": "2s", "shutdown-timeout": 1500}' }) });
  assert.equal([fromFile.vmCallTimeout, fromFile.shutdownTimeout], [2_000, 1_500]);
  assert.throws(() => run(['--vm-call-timeout=0']), /--vm-call-timeout.*a duration from 1ms/);
  assert.throws(() => run(['--vm-call-timeout=soon']), /--vm-call-timeout/);
  assert.throws(() => run(['--network-timeout-coefficient=0.5']), /--network-timeout-coefficient/);
});

test('network timeouts are checked together: minimum <= initial <= maximum', () => {
  assert.throws(() => run(['--network-minimum-timeout=20s']), /--network-minimum-timeout \(20000 ms\) exceeds --network-maximum-timeout/);
  assert.throws(() => run(['--network-initial-timeout=1s']), /--network-initial-timeout \(1000 ms\) must lie between/);
  const c = run(['--network-minimum-timeout=100ms', '--network-initial-timeout=300ms', '--network-maximum-timeout=1s']);
  assert.equal([c.networkMinimumTimeout, c.networkInitialTimeout, c.networkMaximumTimeout], [100, 300, 1000]);
});

test('allowed origins and hosts: lists, empty list, wildcard, IPv6 in brackets', () => {
  const c = run(['--http-allowed-origins=https://app.example,http://localhost:3000', '--http-allowed-hosts=node.example,[::1],10.0.0.1']);
  assert.equal(c.httpAllowedOrigins, ['https://app.example', 'http://localhost:3000']);
  assert.equal(c.httpAllowedHosts, ['node.example', '[::1]', '10.0.0.1']);
  assert.equal(run(['--http-allowed-hosts=']).httpAllowedHosts, []);
  assert.equal(run(['--http-allowed-origins=*', '--http-allowed-hosts=*']).httpAllowedOrigins, ['*']);
  assert.equal(run([], { CORNICE_HTTP_ALLOWED_ORIGINS: 'https://a.example' }).httpAllowedOrigins, ['https://a.example']);
});

test('default home is os.homedir()', async () => {
  const { homedir } = await import('node:os');
  const r = parseConfig([], {});
  assert.is(r.kind, 'run');
  if (r.kind === 'run') assert.is(r.config.dataDir, join(homedir(), '.cornice'));
});

test('integers: --flag=value and --flag value, 0 allowed for the port', () => {
  const c = run(['--http-port=9700', '--http-max-body-bytes', '2048', '--http-max-batch-size=1']);
  assert.is(c.httpPort, 9700);
  assert.is(c.httpMaxBodyBytes, 2048);
  assert.is(c.httpMaxBatchSize, 1);
  assert.is(run(['--http-port', '0']).httpPort, 0);
  assert.is(run(['--http-port=65535']).httpPort, 65535);
});

test('booleans: bare means true, =false, =true, =1, =0, case-insensitive', () => {
  assert.is(run(['--api-ipcs-enabled']).apiIpcsEnabled, true);
  assert.is(run(['--api-admin-enabled=false']).apiAdminEnabled, false);
  assert.is(run(['--api-admin-enabled=FALSE']).apiAdminEnabled, false);
  assert.is(run(['--api-ipcs-enabled=true']).apiIpcsEnabled, true);
  assert.is(run(['--api-ipcs-enabled=1']).apiIpcsEnabled, true);
  assert.is(run(['--api-health-enabled=0']).apiHealthEnabled, false);
  const c = run([
    '--api-keystore-enabled=false',
    '--api-metrics-enabled=false',
    '--api-health-enabled=false',
    '--api-admin-enabled=false',
    '--api-ipcs-enabled',
  ]);
  assert.equal(
    [c.apiKeystoreEnabled, c.apiMetricsEnabled, c.apiHealthEnabled, c.apiAdminEnabled, c.apiIpcsEnabled],
    [false, false, false, false, true],
  );
});

test('a bare boolean does not take the next argument', () => {
  const c = run(['--api-ipcs-enabled', '--http-port', '1']);
  assert.is(c.apiIpcsEnabled, true);
  assert.is(c.httpPort, 1);
});

test('strings and enums', () => {
  const c = run(['--http-host', '0.0.0.0', '--db-type=memory', '--log-level', 'debug']);
  assert.is(c.httpHost, '0.0.0.0');
  assert.is(c.dbType, 'memory');
  assert.is(c.logLevel, 'debug');
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'off'] as const) {
    assert.is(run([`--log-level=${level}`]).logLevel, level);
  }
  assert.is(run(['--log-level=WARN']).logLevel, 'warn');
  assert.is(run(['--db-type=leveldb']).dbType, 'leveldb');
});

test('network ids: names, network-<n>, bare numbers', () => {
  const cases: [string, number, string][] = [
    ['mainnet', 1, 'mainnet'],
    ['cascade', 2, 'cascade'],
    ['denali', 3, 'denali'],
    ['testnet', 3, 'denali'],
    ['local', 12345, 'local'],
    ['LOCAL', 12345, 'local'],
    ['network-99', 99, 'network-99'],
    ['network-1', 1, 'mainnet'],
    ['12345', 12345, 'local'],
    ['99', 99, 'network-99'],
    ['0', 0, 'network-0'],
    ['4294967295', 4294967295, 'network-4294967295'],
  ];
  for (const [arg, id, name] of cases) {
    const c = run([`--network-id=${arg}`]);
    assert.is(c.networkId, id, arg);
    assert.is(c.networkName, name, arg);
    assert.is(c.dbDir, `/home/op/.cornice/db/${name}`, arg);
  }
});

test('paths expand a leading ~; derived paths follow data-dir', () => {
  const c = run(['--data-dir=~/nodes/n1']);
  assert.is(c.dataDir, '/home/op/nodes/n1');
  assert.is(c.dbDir, '/home/op/nodes/n1/db/local');
  assert.is(c.stakingTlsCertFile, '/home/op/nodes/n1/staking/staker.crt');
  assert.is(c.stakingTlsKeyFile, '/home/op/nodes/n1/staking/staker.key');
  assert.is(c.profileDir, '/home/op/nodes/n1/profiles');
  assert.is(run(['--data-dir', '~']).dataDir, '/home/op');
  assert.is(run(['--data-dir=/abs/x']).dbDir, '/abs/x/db/local');
  assert.is(run(['--data-dir=rel/x']).dataDir, 'rel/x');
  assert.is(run(['--data-dir=~user/x']).dataDir, '~user/x');
  const d = run([
    '--db-dir=~/db',
    '--staking-tls-cert-file=~/c.crt',
    '--staking-tls-key-file',
    '/k.key',
    '--profile-dir=/p',
    '--network-id=mainnet',
  ]);
  assert.equal(
    [d.dbDir, d.stakingTlsCertFile, d.stakingTlsKeyFile, d.profileDir],
    ['/home/op/db', '/home/op/c.crt', '/k.key', '/p'],
  );
});

test('the last repeated flag wins', () => {
  assert.is(run(['--http-port=1', '--http-port=2']).httpPort, 2);
});

test('values may contain = and start with a single dash', () => {
  assert.is(run(['--http-host=a=b']).httpHost, 'a=b');
  assert.is(run(['--data-dir', '-weird']).dataDir, '-weird');
});

test('environment: CORNICE_<FLAG>', () => {
  const c = run([], {
    CORNICE_HTTP_PORT: '9700',
    CORNICE_NETWORK_ID: 'network-7',
    CORNICE_API_IPCS_ENABLED: 'true',
    CORNICE_DATA_DIR: '~/envdata',
    CORNICE_LOG_LEVEL: 'error',
    CORNICE_HTTP_MAX_BODY_BYTES: '10',
    PATH: '/bin',
  });
  assert.is(c.httpPort, 9700);
  assert.is(c.networkId, 7);
  assert.is(c.networkName, 'network-7');
  assert.is(c.apiIpcsEnabled, true);
  assert.is(c.dataDir, '/home/op/envdata');
  assert.is(c.dbDir, '/home/op/envdata/db/network-7');
  assert.is(c.logLevel, 'error');
  assert.is(c.httpMaxBodyBytes, 10);
});

test('environment: empty values are unset; unknown CORNICE_ names and --help/--version are ignored', () => {
  const c = run([], { CORNICE_HTTP_PORT: '', CORNICE_NOT_A_FLAG: 'x', CORNICE_HELP: 'true', CORNICE_VERSION: 'true' });
  assert.is(c.httpPort, 9650);
});

test('config file: keys are flag names; typed values', () => {
  const file = JSON.stringify({
    'http-port': 9652,
    'http-host': '10.0.0.1',
    'network-id': 'cascade',
    'api-admin-enabled': false,
    'db-type': 'memory',
    'data-dir': '~/fromfile',
    'log-level': 'trace',
  });
  const c = run(['--config-file=/etc/cornice.json'], {}, { readFile: files({ '/etc/cornice.json': file }) });
  assert.is(c.configFile, '/etc/cornice.json');
  assert.is(c.httpPort, 9652);
  assert.is(c.httpHost, '10.0.0.1');
  assert.is(c.networkId, 2);
  assert.is(c.networkName, 'cascade');
  assert.is(c.apiAdminEnabled, false);
  assert.is(c.dbType, 'memory');
  assert.is(c.dataDir, '/home/op/fromfile');
  assert.is(c.dbDir, '/home/op/fromfile/db/cascade');
  assert.is(c.logLevel, 'trace');
});

test('config file: numeric network id; path from CORNICE_CONFIG_FILE with ~', () => {
  const c = run([], { CORNICE_CONFIG_FILE: '~/c.json' }, { readFile: files({ '/home/op/c.json': '{"network-id": 99}' }) });
  assert.is(c.configFile, '/home/op/c.json');
  assert.is(c.networkId, 99);
  assert.is(c.networkName, 'network-99');
});

test('config file: the command line path wins over CORNICE_CONFIG_FILE', () => {
  const c = run(['--config-file', '/a.json'], { CORNICE_CONFIG_FILE: '/b.json' }, {
    readFile: files({ '/a.json': '{"http-port": 1}', '/b.json': '{"http-port": 2}' }),
  });
  assert.is(c.httpPort, 1);
});

test('config file: read from disk by default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cornice-config-'));
  try {
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ 'http-port': 9999, 'api-ipcs-enabled': true }));
    const r = parseConfig([`--config-file=${path}`], {}, { homedir: home });
    assert.is(r.kind, 'run');
    if (r.kind === 'run') {
      assert.is(r.config.httpPort, 9999);
      assert.is(r.config.apiIpcsEnabled, true);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('precedence: command line > environment > config file > defaults', () => {
  const readFile = files({
    '/c.json': JSON.stringify({ 'http-port': 1, 'http-host': 'file-host', 'log-level': 'warn', 'http-max-batch-size': 5 }),
  });
  const env = { CORNICE_HTTP_PORT: '2', CORNICE_HTTP_HOST: 'env-host' };
  const c = run(['--config-file=/c.json', '--http-port=3'], env, { readFile });
  assert.is(c.httpPort, 3); // cli over env and file
  assert.is(c.httpHost, 'env-host'); // env over file
  assert.is(c.logLevel, 'warn'); // file over default
  assert.is(c.httpMaxBatchSize, 5);
  assert.is(c.httpMaxBodyBytes, 1048576); // default
});

test('derived defaults follow the final data-dir, whichever source set it', () => {
  const readFile = files({ '/c.json': JSON.stringify({ 'data-dir': '/file', 'network-id': 'mainnet' }) });
  const fromFile = run(['--config-file=/c.json'], {}, { readFile });
  assert.is(fromFile.dbDir, '/file/db/mainnet');
  assert.is(fromFile.profileDir, '/file/profiles');
  const fromEnv = run(['--config-file=/c.json'], { CORNICE_DATA_DIR: '/env' }, { readFile });
  assert.is(fromEnv.dbDir, '/env/db/mainnet');
  assert.is(fromEnv.stakingTlsKeyFile, '/env/staking/staker.key');
  const fromCli = run(['--config-file=/c.json', '--data-dir=/cli', '--network-id=local'], { CORNICE_DATA_DIR: '/env' }, {
    readFile,
  });
  assert.is(fromCli.dbDir, '/cli/db/local');
  assert.is(fromCli.stakingTlsCertFile, '/cli/staking/staker.crt');
  // An explicit derived path is kept.
  const explicit = run(['--data-dir=/cli'], { CORNICE_DB_DIR: '/envdb' });
  assert.is(explicit.dbDir, '/envdb');
  assert.is(explicit.profileDir, '/cli/profiles');
});

test('--help returns the help text, even with other (bad) flags', () => {
  for (const argv of [['--help'], ['--http-port=abc', '--help'], ['--nope', '--help=true']]) {
    const r = parseConfig(argv, {}, { homedir: home });
    assert.is(r.kind, 'help');
    if (r.kind === 'help') assert.ok(r.text.startsWith('Usage: cornice [flags]'));
  }
  assert.is(parseConfig(['--help=false'], {}, { homedir: home }).kind, 'run');
});

test('--version, without reading the environment or config file', () => {
  const readFile = (): string => {
    throw new Error('must not read');
  };
  assert.equal(parseConfig(['--version'], { CORNICE_HTTP_PORT: 'bad' }, { readFile }), { kind: 'version' });
  assert.equal(parseConfig(['--config-file=/x.json', '--version'], {}, { readFile }), { kind: 'version' });
  assert.is(parseConfig(['--version=false'], {}, { homedir: home }).kind, 'run');
});

test('consensus parameters are validated together, naming the flags', () => {
  const bad = (argv: string[], re: RegExp) => {
    try {
      parseConfig(argv, {}, { homedir: home });
      assert.unreachable(argv.join(' '));
    } catch (e) {
      assert.match((e as Error).message, re);
    }
  };
  bad(['--snow-quorum-size=10'], /--snow-quorum-size.*--snow-sample-size/);
  bad(['--snow-sample-size=5', '--snow-quorum-size=6'], /--snow-quorum-size/);
  bad(['--snow-virtuous-commit-threshold=31'], /--snow-virtuous-commit-threshold/);
  bad(['--snow-concurrent-repolls=31'], /--snow-concurrent-repolls/);
  const ok = parseConfig(['--snow-sample-size=1', '--snow-quorum-size=1', '--snow-virtuous-commit-threshold=1', '--snow-rogue-commit-threshold=1', '--snow-concurrent-repolls=1'], {}, { homedir: home });
  assert.is(ok.kind, 'run');
});

test('--vms is a comma-separated list (a JSON array in a config file); empty means none', () => {
  const run = (argv: string[], opts: Partial<ParseOptions> = {}) => {
    const r = parseConfig(argv, {}, { homedir: home, ...opts });
    if (r.kind !== 'run') throw new TypeError('run expected');
    return r.config;
  };
  assert.equal(run(['--vms=@cornice/timestamp, ./my-vm']).vms, ['@cornice/timestamp', './my-vm']);
  assert.equal(run(['--vms=']).vms, []);
  assert.equal(run(['--config-file=/c.json'], { readFile: () => '{"vms": ["a", "b"]}' }).vms, ['a', 'b']);
  assert.throws(() => run(['--vms=a,,b']), /invalid value "a,,b" for --vms/);
  assert.throws(() => run(['--config-file=/c.json'], { readFile: () => '{"vms": "a"}' }), /vms/);
  assert.is(run(['--sybil-protection-enabled=false']).sybilProtectionEnabled, false);
});

test('--evm-debug-api: off by default (whatever the network, local included), on bare or =true, from the environment and a config file; not a value', () => {
  assert.is(run([]).evmDebugApi, false);
  assert.is(run(['--network-id=local']).evmDebugApi, false);
  assert.is(run(['--evm-debug-api']).evmDebugApi, true);
  assert.is(run(['--evm-debug-api=true']).evmDebugApi, true);
  assert.is(run(['--evm-debug-api', '--evm-debug-api=false']).evmDebugApi, false);
  assert.is(run([], { CORNICE_EVM_DEBUG_API: 'true' }).evmDebugApi, true);
  assert.is(run(['--config-file=/c.json'], {}, { readFile: () => '{"evm-debug-api": true}' }).evmDebugApi, true);
  assert.throws(() => run(['--evm-debug-api=yes please']), /--evm-debug-api/);
  assert.throws(() => run(['--config-file=/c.json'], {}, { readFile: () => '{"evm-debug-api": "on"}' }), /evm-debug-api/);
});

test('--vm-isolation: <vmID or alias>=worker entries or all; anything else is refused naming the entry', () => {
  assert.equal(run(['--vm-isolation=timestamp=worker,kvvm=worker']).vmIsolation, ['timestamp=worker', 'kvvm=worker']);
  assert.equal(run(['--vm-isolation=all']).vmIsolation, ['all']);
  assert.equal(run([]).vmIsolation, []);
  assert.throws(() => run(['--vm-isolation=timestamp']), /"timestamp" is neither all nor <vmID or alias>=worker/);
  assert.throws(() => run(['--vm-isolation=timestamp=process']), /"timestamp=process": the only isolation is worker/);
});

test.run();
