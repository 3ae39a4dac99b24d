import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envName, flags } from '../../src/config/flags.js';
import { helpText, parseConfig } from '../../src/config/parse.js';

const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

test('flag names are unique, kebab-case, and each key is the camelCase name', () => {
  const names = flags.map((f) => f.name);
  assert.is(new Set(names).size, names.length);
  for (const f of flags) {
    assert.match(f.name, /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
    if (f.key !== undefined) assert.is(f.key, camel(f.name));
    assert.ok(f.description.length > 0, f.name);
  }
});

test('every NodeConfig field comes from a row (plus networkName)', () => {
  const r = parseConfig([], {}, { homedir: '/h' });
  if (r.kind !== 'run') throw new Error('expected run');
  const keys = flags.flatMap((f) => (f.key ? [f.key] : []));
  assert.equal(Object.keys(r.config).sort(), [...keys, 'networkName'].sort());
});

test('environment names', () => {
  const byName = new Map(flags.map((f) => [f.name, f]));
  assert.is(envName(byName.get('http-port')!), 'CORNICE_HTTP_PORT');
  assert.is(envName(byName.get('staking-tls-cert-file')!), 'CORNICE_STAKING_TLS_CERT_FILE');
});

test('help: usage line and every flag with its type, default and description', () => {
  const text = helpText();
  assert.ok(text.startsWith('Usage: cornice [flags]\n'));
  const lines = text.split('\n');
  for (const f of flags) {
    const i = lines.findIndex((l) => l.startsWith(`  --${f.name} `));
    assert.ok(i >= 0, `--${f.name} listed`);
    const head = lines[i]!;
    assert.ok(head.includes(` ${f.type.label}`), `${f.name} type`);
    if (f.defaultText !== undefined) assert.ok(head.endsWith(`(default ${f.defaultText})`), `${f.name} default`);
    assert.ok(lines[i + 1]!.includes(f.description), `${f.name} description`);
  }
  const expectLine = (flag: string, line: string): void => {
    assert.ok(
      lines.some((l) => l === line),
      `help line for ${flag}: ${line}\n${text}`,
    );
  };
  expectLine('http-port', '  --http-port int (default 9650)');
  expectLine('network-id', '  --network-id network (default local)');
  expectLine('log-level', '  --log-level trace|debug|info|warn|error|fatal|off (default info)');
  expectLine('db-type', '  --db-type leveldb|memory (default leveldb)');
  expectLine('api-ipcs-enabled', '  --api-ipcs-enabled bool (default false)');
  expectLine('data-dir', '  --data-dir path (default ~/.cornice)');
  expectLine('db-dir', '  --db-dir path (default <data-dir>/db/<network name>)');
  expectLine('profile-dir', '  --profile-dir path (default <data-dir>/profiles)');
  expectLine('config-file', '  --config-file path');
  expectLine('help', '  --help bool');
  assert.ok(text.includes('env CORNICE_HTTP_PORT'));
  assert.ok(text.includes('CORNICE_HTTP_PORT=9700'));
  assert.ok(text.includes('command line > environment > config file > defaults'));
});

test('help via parseConfig is helpText()', () => {
  assert.equal(parseConfig(['--help'], {}), { kind: 'help', text: helpText() });
});

test.run();
