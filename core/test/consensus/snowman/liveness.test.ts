/**
 * Liveness without spinning: no polls while too little stake is reachable (and a bounded number of
 * timers meanwhile), a rate-limited reason in the log, resumption when validators come back; build
 * failures back off; halt() reports its reason.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Block, VMEvent } from '@cornice/sdk';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import { EventQueue, TestVM, TestVMError } from '../../../src/testing/simulation.js';
import { SnowmanEngine } from '../../../src/consensus/snowman/engine.js';
import type { ShortId } from '@cornice/sdk';
import { createLogger } from '../../../src/log/logger.js';
import { fixedSampler, flush, nodeIdOf, RecordingTransport } from '../helpers.js';

const test = suite('engine liveness');

function recordingLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'trace', write: (l) => lines.push(JSON.parse(l)) });
  return { log, lines, msgs: (msg: string) => lines.filter((l) => l.msg === msg) };
}

/** Runs the virtual clock up to `until` ms, flushing microtasks after each event; returns how many events ran. */
async function runClock(clock: EventQueue, until: number): Promise<number> {
  let events = 0;
  for (;;) {
    const t = clock.peekTime();
    if (t === undefined || t > until) break;
    clock.runNext();
    events += 1;
    await flush();
  }
  clock.advanceTo(until);
  return events;
}

function engineWith(opts: { vm?: TestVM; reachable: (id: ShortId) => boolean; bag: ShortId[] }) {
  const self = nodeIdOf(1);
  const vm = opts.vm ?? new TestVM();
  const transport = new RecordingTransport(self);
  const clock = new EventQueue();
  const rec = recordingLog();
  const halts: string[] = [];
  const engine = new SnowmanEngine({
    vm,
    params: DEFAULT_SNOW_PARAMS,
    transport,
    validators: fixedSampler(opts.bag, opts.reachable),
    nodeId: self,
    scheduler: clock,
    log: rec.log,
    queryTimeoutMs: 1000,
    directSelfPolls: false, // polls are answered by hand, or not at all
    onHalt: (r) => halts.push(r),
  });
  return { self, vm, transport, clock, engine, ...rec, halts };
}

test('1 of 5 validators reachable: a built block is never polled, a few timers run, the reason is logged at a bounded rate', async () => {
  const validators = [1, 2, 3, 4, 5].map(nodeIdOf);
  let online = new Set([validators[0]!.key]);
  const bag = Array.from({ length: 20 }, (_, i) => validators[i % 5]!);
  const h = engineWith({ bag, reachable: (id) => online.has(id.key) });
  await h.engine.start();
  h.vm.notify();
  await flush();
  assert.is(h.engine.processing, 1);
  const events = await runClock(h.clock, 30_000);
  assert.is(h.transport.take('pushQuery').length, 0, 'no query was sent');
  assert.is(h.engine.stats.pollsStarted, 0);
  assert.ok(events <= 31, `at most one recheck a second (ran ${events} events in 30 s)`);
  assert.is(h.clock.pending, 1, 'one timer pending, not one per attempt');
  const waits = h.msgs('waiting for validators');
  assert.is(waits.length, 1, 'logged once in 30 s (then once a minute)');
  assert.is(waits[0]!.level, 'warn');
  assert.is(waits[0]!.detail, '1 of 5 connected, 20% of stake, need 75%');
  assert.equal(h.engine.stats.waiting, { validators: 5, reachable: 1, benched: 0, unresponsive: 0, totalWeight: 20, reachableWeight: 4, unresponsiveWeight: 0 });
  await runClock(h.clock, 90_000);
  assert.is(h.msgs('waiting for validators').length, 2, 'again after a minute');

  // Four of five come online: 80% >= 75%, so polls go out at the next recheck.
  online = new Set(validators.slice(0, 4).map((v) => v.key));
  await runClock(h.clock, 91_000);
  assert.is(h.engine.stats.waiting, undefined);
  assert.is(h.engine.pollsInFlight, DEFAULT_SNOW_PARAMS.concurrentRepolls);
  assert.ok(h.transport.take('pushQuery').length > 0);
  assert.is(h.msgs('validators reachable; polling resumed').length, 1);
  await h.engine.stop();
  assert.is(h.clock.pending, 0, 'stop cancels the recheck');
});

test('an idle engine says once at start that it cannot make progress, then schedules nothing', async () => {
  const h = engineWith({ bag: [nodeIdOf(2)], reachable: () => false });
  await h.engine.start();
  assert.is(h.msgs('waiting for validators').length, 1);
  assert.is(h.msgs('waiting for validators')[0]!.processing, 0);
  assert.ok((await runClock(h.clock, 600_000)) <= 1, 'one recheck at most');
  assert.is(h.clock.pending, 0);
  assert.is(h.msgs('waiting for validators').length, 1);
  await h.engine.stop();
  const ok = engineWith({ bag: [nodeIdOf(1)], reachable: () => true });
  await ok.engine.start();
  assert.is(await runClock(ok.clock, 600_000), 0, 'reachable: nothing at all');
  assert.is(ok.msgs('waiting for validators').length, 0);
  await ok.engine.stop();
});

/** waitForEvent always has work; buildBlock always throws. Gives up after 1000 calls so a spinning engine fails the test instead of hanging it. */
class FailingBuilder extends TestVM {
  calls = 0;
  override waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    if (this.calls >= 1000) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new TestVMError('Aborted', 'aborted'))));
    return Promise.resolve('pendingTxs');
  }
  override async buildBlock(): Promise<Block> {
    this.calls += 1;
    throw new TestVMError('InvalidBlock', 'mempool is corrupt');
  }
}

test('buildBlock that keeps throwing: exponential backoff capped at 30 s, each failure at warn with the error', async () => {
  const vm = new FailingBuilder();
  const h = engineWith({ vm, bag: [nodeIdOf(1)], reachable: () => true });
  await h.engine.start();
  await flush();
  await runClock(h.clock, 120_000);
  // 100 ms, 200, 400, ... 25.6 s, then 30 s: 10 builds in the first 60 s, 12 in 120 s.
  assert.ok(vm.calls >= 10 && vm.calls <= 13, `builds in 120 s: ${vm.calls}`);
  const warns = h.msgs('buildBlock failed');
  assert.is(warns.length, vm.calls);
  assert.is(warns[0]!.level, 'warn');
  assert.match(String(warns[0]!.error), /mempool is corrupt/);
  assert.equal(warns.slice(0, 4).map((w) => w.retryInMs), [100, 200, 400, 800]);
  assert.is(warns.at(-1)!.retryInMs, 30_000);
  assert.is(h.engine.stats.buildFailures, vm.calls);
  await h.engine.stop();
});

/** Builds blocks that fail verification. */
class InvalidBuilder extends TestVM {
  override async buildBlock(): Promise<Block> {
    this.buildCalls += 1;
    return this.makeBlock(this.lastAcceptedBlock, { invalid: true });
  }
}

test('a built block that fails verification is logged at warn, dropped, and the next build waits', async () => {
  const vm = new InvalidBuilder();
  const h = engineWith({ vm, bag: [nodeIdOf(1)], reachable: () => true });
  await h.engine.start();
  vm.notify();
  vm.notify();
  await flush();
  assert.is(vm.buildCalls, 1, 'the second build waits for the backoff');
  const failed = h.msgs('block failed verification');
  assert.is(failed.length, 1);
  assert.is(failed[0]!.level, 'warn');
  assert.is(failed[0]!.own, true);
  assert.is(h.msgs('built block failed verification')[0]!.retryInMs, 100);
  assert.is(h.engine.processing, 0);
  await runClock(h.clock, 100);
  assert.is(vm.buildCalls, 2);
  await h.engine.stop();
});

test('a good build resets the backoff', async () => {
  let fail = true;
  class Flaky extends TestVM {
    override async buildBlock(): Promise<Block> {
      if (fail) {
        this.buildCalls += 1;
        throw new TestVMError('InvalidBlock', 'not yet');
      }
      return super.buildBlock();
    }
  }
  const vm = new Flaky();
  const h = engineWith({ vm, bag: [nodeIdOf(1)], reachable: () => true });
  await h.engine.start();
  vm.notify();
  await flush();
  vm.notify();
  await runClock(h.clock, 100);
  assert.is(h.engine.stats.buildFailures, 2);
  fail = false;
  vm.notify();
  await runClock(h.clock, 300);
  assert.is(h.engine.stats.buildFailures, 0);
  assert.is(h.engine.processing, 1);
  await h.engine.stop();
});

test('halt(reason): stops polls and builds, tells onHalt once, keeps the reason in stats', async () => {
  const h = engineWith({ bag: [nodeIdOf(1)], reachable: () => true });
  await h.engine.start();
  h.vm.notify();
  await flush();
  assert.ok(h.engine.pollsInFlight > 0);
  h.engine.halt('vm.verify did not settle within 30000 ms');
  h.engine.halt('again');
  assert.equal(h.halts, ['vm.verify did not settle within 30000 ms']);
  assert.is(h.engine.stats.state, 'halted');
  assert.is(h.engine.stats.haltReason, 'vm.verify did not settle within 30000 ms');
  assert.is(h.engine.pollsInFlight, 0);
  assert.is(h.msgs('consensus halted')[0]!.level, 'fatal');
  await h.engine.stop();
});

test('a failing accept halts the engine with a reason naming the block', async () => {
  class BadAccept extends TestVM {}
  const vm = new BadAccept();
  const h = engineWith({ vm, bag: Array.from({ length: 20 }, () => nodeIdOf(1)), reachable: () => true });
  await h.engine.start();
  vm.notify();
  await flush();
  const block = vm.blocks.get(h.engine.preference.key)!;
  block.accept = async () => {
    throw new TestVMError('InvalidBlock', 'disk full');
  };
  for (let i = 0; i < 100 && h.engine.stats.state === 'running'; i++) {
    for (const q of h.transport.take('pushQuery')) h.engine.onChits(h.self, q.requestId, block.id);
    await flush();
  }
  assert.is(h.engine.stats.state, 'halted');
  assert.match(h.halts[0]!, /accept of block .* at height 1 failed: TestVMError: disk full/);
  await h.engine.stop();
});

test.run();
