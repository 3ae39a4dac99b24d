/**
 * Issue 35's Foundry clients, unchanged: `cast run <tx>` and `cast call --trace` show the call tree
 * of the tracing sequence's transactions (src/trace-sequence.ts) with the contracts' names (cast's
 * `--label`s) and the revert of Boom(uint256) three calls deep. First against anvil, which shows
 * what cast prints and that these checks read it right, then against a cornice node started with
 * npm start's flags (the suite's name says it is the node's).
 *
 * cast runs offline: a fresh HOME (no user cache or config), FOUNDRY_OFFLINE (no signature
 * database, no Etherscan), so selectors stay undecoded hex and names come from the labels.
 * `--evm-version cancun`: the C-Chain's fork, which cast cannot learn from an unknown chain ID.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EWOQ_EVM_ADDRESS, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';
import { runCast, startAnvil, type Anvil, type CastResult } from '../src/foundry.js';
import { prepareAnvil, runTraceSequence, type SequenceResult } from '../src/trace-sequence.js';

/** Boom(uint256)'s selector: cast prints an undecoded custom error by it. */
const BOOM_SELECTOR = '0x1167d8fb';

interface CastTarget {
  url: string;
  seq: SequenceResult;
  /** A fresh HOME per target: cast caches fetched state by chain ID and block, and both targets share the chain ID. */
  home: string;
}

const txHash = (seq: SequenceResult, label: RegExp): string => {
  const t = seq.txs.find((x) => label.test(x.label));
  if (!t) throw new Error(`no tx labelled ${label}`);
  return t.hash;
};

function labels(seq: SequenceResult, flag: '--label' | '--labels'): string[] {
  return Object.entries(seq.addresses).flatMap(([name, addr]) => [flag, `${addr}:${name}`]);
}

/** cast's trace lines by suite and test, for the last suite's comparison of the two targets. */
const outputs = new Map<string, string[]>();

const shown = (r: CastResult) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** The trace lines of cast's output (after `Traces:`), without the tree drawing. */
function traceLines(out: string): string[] {
  const at = out.indexOf('Traces:');
  return at < 0 ? [] : out.slice(at).split('\n').slice(1).filter((l) => l.trim() !== '');
}

/** Top -> Middle -> Leaf, each one level deeper, and the Boom revert at each of the three levels. */
function assertBoomTree(r: CastResult): void {
  const lines = traceLines(r.stdout);
  const depthOf = (name: string) => {
    const line = lines.find((l) => l.includes(`${name}::`));
    assert.ok(line, `no ${name} frame in:\n${shown(r)}`);
    return line!.search(/[A-Z]/);
  };
  const [top, middle, leaf] = [depthOf('Top'), depthOf('Middle'), depthOf('Leaf')];
  assert.ok(top < middle && middle < leaf, `frames not nested Top > Middle > Leaf:\n${shown(r)}`);
  const reverts = lines.filter((l) => l.includes('[Revert]') && l.includes(`custom error ${BOOM_SELECTOR}`));
  assert.is(reverts.length, 3, shown(r));
  assert.match(r.stderr, /Transaction failed/, shown(r));
}

function castSuite(name: string, key: string, start: () => Promise<{ target: CastTarget; stop(): Promise<void> }>) {
  const s = suite(name);
  const state: { target?: CastTarget; stop?: () => Promise<void> } = {};
  s.before(
    setupReporting(async () => {
      const started = await start();
      state.target = started.target;
      state.stop = started.stop;
    }),
  );
  s.after(async () => {
    await state.stop?.();
    if (state.target) await rm(state.target.home, { recursive: true, force: true });
  });

  s('cast run <tx>: the Boom revert three calls deep, with the contracts named', async () => {
    const t = state.target!;
    const r = await runCast(['run', txHash(t.seq, /^Top\.run/), '--rpc-url', t.url, '--evm-version', 'cancun', ...labels(t.seq, '--label')], t.home);
    assertBoomTree(r);
    outputs.set(`${key} run Top`, traceLines(r.stdout));
  });

  s('cast run <tx>: DELEGATECALL, CREATE2 and the call into the new contract', async () => {
    const t = state.target!;
    const r = await runCast(['run', txHash(t.seq, /^Factory/), '--rpc-url', t.url, '--evm-version', 'cancun', ...labels(t.seq, '--label')], t.home);
    assert.is(r.code, 0, shown(r));
    const lines = traceLines(r.stdout);
    assert.ok(
      lines.some((l) => l.includes('Counter::') && l.includes('[delegatecall]')),
      shown(r),
    );
    assert.ok(
      lines.some((l) => l.includes(`new Counter_create2@${t.seq.addresses.Counter_create2}`)),
      shown(r),
    );
    assert.ok(
      lines.some((l) => l.includes('Counter_create2::')),
      shown(r),
    );
    assert.match(r.stdout, /Transaction successfully executed/, shown(r));
    outputs.set(`${key} run Factory`, traceLines(r.stdout));
  });

  s('cast call --trace: the same revert from a call on the latest state', async () => {
    const t = state.target!;
    const r = await runCast(
      ['call', '--trace', t.seq.addresses.Top!, 'run(uint256)', '21', '--from', EWOQ_EVM_ADDRESS, '--rpc-url', t.url, '--evm-version', 'cancun', ...labels(t.seq, '--labels')],
      t.home,
    );
    assertBoomTree(r);
    outputs.set(`${key} call Top`, traceLines(r.stdout));
  });

  s.run();
}

castSuite('evm cast trace: anvil (the reference output)', 'anvil', async () => {
  const anvil: Anvil = await startAnvil({ chainId: 43110n });
  try {
    await prepareAnvil(anvil);
    const seq = await runTraceSequence(anvil);
    return { target: { url: anvil.url, seq, home: await mkdtemp(join(tmpdir(), 'cast-home-')) }, stop: anvil.stop };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
});

castSuite('evm cast trace: cornice node as npm start runs it (issue 35)', 'cornice', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-cast-'));
  const node: EvmTarget = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
  const stop = async () => {
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const seq = await runTraceSequence(node);
    return { target: { url: node.rpcUrl, seq, home: await mkdtemp(join(tmpdir(), 'cast-home-')) }, stop };
  } catch (e) {
    await stop();
    throw e;
  }
});

// cast replays a tx in its own EVM on the state it fetches (eth_getProof, eth_getStorageAt, blocks):
// the same trees, gas figures included, show the node serves the same state as anvil.
const same = suite('evm cast trace: cornice prints the same trees as anvil');
for (const what of ['run Top', 'run Factory', 'call Top']) {
  same(`cast ${what}`, () => {
    const a = outputs.get(`anvil ${what}`);
    const c = outputs.get(`cornice ${what}`);
    assert.ok(a && c, `both targets ran cast ${what} (anvil: ${a !== undefined}, cornice: ${c !== undefined})`);
    assert.equal(c, a);
  });
}
same.run();
