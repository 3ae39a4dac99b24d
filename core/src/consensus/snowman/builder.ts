/**
 * The engine's build loop: waits for the VM to have txs (waitForEvent), waits out this node's
 * proposer window for the next height, builds one block and issues it. It yields a turn of the event
 * loop after every build, and backs off (buildBackoffMinMs doubling to buildBackoffMaxMs) after a
 * build that throws, a built block that fails verification or is not new, or a failing
 * waitForEvent, so a misbehaving VM cannot starve the node.
 */
import type { Block, ChainVM, Logger } from '@cornice/sdk';
import { describe, safeId, type EngineLimits } from './options.js';
import type { TreeNode } from './topological.js';
import type { Scheduler } from './types.js';

/**
 * What became of a block given to the engine. 'dropped': invalid for good (remembered as decided);
 * 'failed': its verify threw (not remembered for long: see failedVerifyTtlMs).
 */
export type AddResult = 'added' | 'known' | 'held' | 'dropped' | 'failed' | 'ignored';

type BuildProblem = { problem: string; level?: 'warn' | 'debug'; [field: string]: unknown };

export interface BuilderOptions {
  vm: Pick<ChainVM, 'waitForEvent' | 'buildBlock'>;
  scheduler: Scheduler;
  log: Logger;
  limits: EngineLimits;
  /** How long after its parent became preferred this node may build at `height` (see SnowmanEngineOptions). */
  proposerDelay: ((height: number) => number) | undefined;
  running: () => boolean;
  /** The preferred tip, the parent of the next block (once started). */
  tip: () => TreeNode | undefined;
  /** Runs `fn` in the engine's task queue. */
  enqueue: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Issues a block this node built (inside the task queue). */
  add: (block: Block) => Promise<AddResult>;
}

export class Builder {
  readonly #o: BuilderOptions;
  #loop: Promise<void> | undefined;
  #backoff: { cancel(): void; wake(): void } | undefined;
  /** The preference this node first had something to build on, and when (the proposer delay counts from there). */
  #buildWindow: { key: string; since: number } | undefined;
  /** Set while the build loop waits for this node's proposer window. */
  #proposerSleep: Promise<void> | undefined;
  #buildFailures = 0;
  #txsWaitingSince: number | undefined;

  constructor(opts: BuilderOptions) {
    this.#o = opts;
  }

  /** Consecutive failed builds (reset by a good one). */
  get buildFailures(): number {
    return this.#buildFailures;
  }

  /** Since when the VM has had txs to build without a block accepted since; undefined when none wait. */
  get txsWaitingSince(): number | undefined {
    return this.#txsWaitingSince;
  }

  /** The loop, once started: it ends when the engine stops running or `signal` aborts. */
  get loop(): Promise<void> | undefined {
    return this.#loop;
  }

  start(signal: AbortSignal): void {
    this.#loop = this.#run(signal);
  }

  /** Cuts a backoff or proposer sleep short (stop, halt). */
  wake(): void {
    this.#backoff?.wake();
  }

  /** A new preference: a proposer sleep ends early (a new height, another window). */
  preferenceChanged(): void {
    if (this.#proposerSleep) this.#backoff?.wake();
  }

  /** A block was accepted: the txs that waited went into it (or wait again from the next event). */
  accepted(): void {
    this.#txsWaitingSince = undefined;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const o = this.#o;
    while (o.running()) {
      let event: string;
      try {
        event = await o.vm.waitForEvent(signal);
      } catch (err) {
        if (!o.running() || signal.aborted) break;
        await this.#buildFailed('waitForEvent failed', { error: describe(err) });
        continue;
      }
      if (!o.running()) break;
      if (event !== 'pendingTxs') continue;
      this.#txsWaitingSince ??= o.scheduler.now();
      const wait = this.#proposerWait();
      if (wait > 0) {
        // Then ask the VM again (another node's block may have taken the txs); a new preference
        // (a new height, another window) wakes it early.
        this.#proposerSleep = this.#sleep(wait);
        await this.#proposerSleep;
        this.#proposerSleep = undefined;
        continue;
      }
      const outcome = await o.enqueue(() => this.#build()).catch((err: unknown) => ({ problem: 'block building failed', error: describe(err) }));
      if (!o.running()) break;
      if (outcome === undefined) {
        this.#buildFailures = 0;
        // Let HTTP, timers and signals through even if the VM asks for blocks without pause.
        await o.scheduler.yield();
      } else {
        const { problem, ...fields } = outcome;
        await this.#buildFailed(problem, fields);
      }
    }
  }

  /**
   * Ms before this node may build on its preference: its proposer window for the next height, counted
   * from when it first had txs to build on this preference (the txs reach every node at about the
   * same time, so the windows line up across nodes).
   */
  #proposerWait(): number {
    const delay = this.#o.proposerDelay;
    if (!delay) return 0;
    const tip = this.#o.tip();
    if (!tip) return 0;
    const now = this.#o.scheduler.now();
    if (this.#buildWindow?.key !== tip.key) this.#buildWindow = { key: tip.key, since: now };
    return this.#buildWindow.since + delay(tip.height + 1) - now;
  }

  /** Builds one block and issues it; undefined when a new block joined the tree, else what went wrong. */
  async #build(): Promise<BuildProblem | undefined> {
    if (!this.#o.running()) return undefined;
    let block: Block;
    try {
      block = await this.#o.vm.buildBlock();
    } catch (err) {
      // The txs went into another node's block meanwhile: routine on a network (see ChainVM).
      const routine = (err as { code?: unknown } | null)?.code === 'NothingToBuild';
      return { problem: routine ? 'nothing to build' : 'buildBlock failed', error: describe(err), ...(routine ? { level: 'debug' as const } : {}) };
    }
    const result = await this.#o.add(block);
    if (result === 'added' || result === 'held' || !this.#o.running()) return undefined;
    return { problem: result === 'dropped' || result === 'failed' ? 'built block failed verification' : 'built block is not new', block: safeId(block), result };
  }

  /** Logs a failed build at warn and sleeps for the next backoff step (stop() cuts it short). */
  async #buildFailed(problem: string, { level = 'warn', ...fields }: Record<string, unknown> & { level?: 'warn' | 'debug' }): Promise<void> {
    this.#buildFailures += 1;
    const { buildBackoffMinMs: min, buildBackoffMaxMs: max } = this.#o.limits;
    const delayMs = Math.min(max, min * 2 ** Math.min(this.#buildFailures - 1, 30));
    this.#o.log[level](problem, { ...fields, failures: this.#buildFailures, retryInMs: delayMs });
    await this.#sleep(delayMs);
  }

  /** A scheduler sleep that wake() cuts short. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#o.scheduler.setTimeout(() => {
        this.#backoff = undefined;
        resolve();
      }, ms);
      this.#backoff = {
        cancel: () => timer.cancel(),
        wake: () => {
          timer.cancel();
          this.#backoff = undefined;
          resolve();
        },
      };
    });
  }
}
