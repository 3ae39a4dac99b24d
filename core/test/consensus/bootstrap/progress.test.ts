import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BootstrapProgressOutput } from '../../../src/consensus/bootstrap/progress.js';
import type { BootstrapProgress } from '../../../src/consensus/bootstrap/types.js';
import { captureLog } from '../../helpers/log.js';

const test = suite('bootstrap: progress output');

function progress(p: Partial<BootstrapProgress>): BootstrapProgress {
  return { chain: 'P', phase: 'executing', fetched: 0, accepted: 0, targetHeight: 10_000, height: 0, etaMs: undefined, ...p };
}

function output(isTTY: boolean) {
  let now = 0;
  const written: string[] = [];
  const log = captureLog();
  const out = new BootstrapProgressOutput({ isTTY, write: (s) => void written.push(s), log, now: () => now, columns: 200 });
  return { out, written, log, at: (t: number) => (now = t) };
}

test('terminal: one line redrawn with \\r at most 4 times a second, bar, counts, rate and ETA; a newline when done', () => {
  const o = output(true);
  o.out.update(progress({ phase: 'waiting for beacons' }));
  o.at(100);
  o.out.update(progress({ phase: 'fetching', fetched: 2_048 }));
  o.at(300);
  o.out.update(progress({ phase: 'fetching', fetched: 10_000 }));
  o.at(1_300);
  o.out.update(progress({ accepted: 5_000, height: 5_000, fetched: 10_000, etaMs: 1_200 }));
  o.at(1_400);
  o.out.update(progress({ accepted: 6_000, height: 6_000, fetched: 10_000, etaMs: 900 }));
  assert.is(o.written.length, 3, 'the updates at 100 ms and 1,400 ms came too soon after a redraw');
  assert.is(o.written[0], '\rP waiting for beacons');
  assert.ok(o.written.every((w) => w.startsWith('\r') && !w.includes('\n')));
  assert.is(
    o.written[2]?.trimEnd(),
    '\rP executing [##########..........] 50% · height 5,000/10,000 · fetched 10,000 · accepted 5,000 · 4,167 blk/s · ETA 0:02',
  );
  o.at(1_500);
  o.out.update(progress({ phase: 'done', accepted: 10_000, height: 10_000, fetched: 10_000, etaMs: 0 }));
  assert.is(o.written.length, 4, 'done is always drawn');
  assert.ok(o.written[3]?.endsWith('\n'));
  assert.match(o.written[3] ?? '', /^\rP done \[#{20}\] 100% · height 10,000\/10,000 · .* · done *\n$/);
  assert.is(o.log.lines.length, 0, 'nothing logged on a terminal');
});

test('terminal: several chains share the line; a shorter redraw blanks what the longer one left; the line is cut to the width', () => {
  const o = output(true);
  o.out.update(progress({ chain: 'P', phase: 'fetching', fetched: 1 }));
  o.at(500);
  o.out.update(progress({ chain: 'X', phase: 'frontier' }));
  assert.match(o.written[1] ?? '', /^\rP fetching .* \| X frontier$/);
  o.at(1_000);
  o.out.update(progress({ chain: 'P', phase: 'done', height: 10_000, accepted: 10_000 }));
  o.at(1_500);
  o.out.update(progress({ chain: 'X', phase: 'waiting for beacons' }));
  assert.match(o.written[2] ?? '', /^\rP done .*\n$/);
  assert.is(o.written[3], '\rX waiting for beacons', 'a new line after the finished chain');
  const narrow = new BootstrapProgressOutput({ isTTY: true, write: (s) => void o.written.push(s), log: o.log, now: () => 0, columns: 30 });
  narrow.update(progress({ accepted: 5, height: 5 }));
  assert.is(o.written.at(-1)?.length, 30, '\\r and 29 characters');
});

test('not a terminal: a structured log line at most every 5 s, and one when done', () => {
  const o = output(false);
  o.out.update(progress({ phase: 'waiting for beacons', targetHeight: undefined }));
  o.at(1_000);
  o.out.update(progress({ phase: 'fetching', fetched: 2_048, targetHeight: undefined }));
  o.at(4_999);
  o.out.update(progress({ phase: 'executing', fetched: 10_000, accepted: 1_000, height: 1_000 }));
  o.at(6_000);
  o.out.update(progress({ phase: 'executing', fetched: 10_000, accepted: 5_000, height: 5_000, etaMs: 4_500 }));
  o.at(7_000);
  o.out.update(progress({ phase: 'executing', fetched: 10_000, accepted: 6_000, height: 6_000, etaMs: 3_000 }));
  o.at(8_000);
  o.out.update(progress({ phase: 'done', fetched: 10_000, accepted: 10_000, height: 10_000, etaMs: 0 }));
  assert.is(o.written.length, 0, 'nothing written raw');
  assert.equal(
    o.log.lines.map((l) => l.msg),
    ['bootstrapping', 'bootstrapping', 'bootstrapping'],
  );
  assert.equal(o.log.lines[0]?.fields, {
    chain: 'P',
    phase: 'waiting for beacons',
    fetched: 0,
    accepted: 0,
    height: 0,
    targetHeight: undefined,
    etaSeconds: undefined,
    blocksPerSecond: undefined,
  });
  assert.equal(o.log.lines[1]?.fields, {
    chain: 'P',
    phase: 'executing',
    fetched: 10_000,
    accepted: 5_000,
    height: 5_000,
    targetHeight: 10_000,
    etaSeconds: 5,
    blocksPerSecond: 1_000,
  });
  assert.is(o.log.lines[2]?.fields?.phase, 'done');
  assert.is(o.log.lines[2]?.fields?.blocksPerSecond, 1_429);
});

test('a throwing writer does not escape', () => {
  const log = captureLog();
  const out = new BootstrapProgressOutput({
    isTTY: true,
    write: () => {
      throw new Error('EPIPE');
    },
    log,
    now: () => 0,
  });
  assert.not.throws(() => out.update(progress({})));
  assert.is(log.lines[0]?.msg, 'progress output failed');
});

test.run();
