import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

/** Imports `entry` in a fresh process whose module resolution refuses @ethereumjs; its output. */
function importRefusingEthereumjs(entry: string): { ok: boolean; out: string } {
  const script = `
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent("export async function resolve(s, c, next) { if (s.startsWith('@ethereumjs/')) throw new Error('loaded ' + s); return next(s, c); }"));
    await import(${JSON.stringify(entry)});
    console.log('imported');`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return { ok: r.status === 0 && r.stdout.includes('imported'), out: r.stdout + r.stderr };
}

const dist = (f: string) => new URL(`../src/${f}`, import.meta.url).href;

test('the package root (what a node imports to learn the plugin) loads no @ethereumjs code', () => {
  const root = importRefusingEthereumjs(dist('index.js'));
  assert.ok(root.ok, root.out);
  // The check itself works: the execution entry does load @ethereumjs.
  const chain = importRefusingEthereumjs(dist('chain-entry.js'));
  assert.not.ok(chain.ok);
  assert.match(chain.out, /loaded @ethereumjs\//);
});

test('vmFactory.create loads the EVM when a chain is made', async () => {
  const { vmFactory } = await import('../src/index.js');
  const { EvmVM } = await import('../src/chain-entry.js');
  assert.ok((await vmFactory.create()) instanceof EvmVM);
});

test.run();
