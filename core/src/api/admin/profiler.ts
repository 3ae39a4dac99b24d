/**
 * Profiles the running node into files under one directory (never outside it): V8 CPU profiles
 * (.cpuprofile JSON, open in Chrome DevTools), sampling heap profiles (heap-profile.ts; full heap
 * snapshots only when `heapSnapshots` is on: they stop the node for seconds and need about the
 * heap's size again), and — since Node.js has no mutexes — a "lock" report of what blocks instead:
 * event-loop delay percentiles and active handles. One memory profile runs at a time; another
 * asked for meanwhile is refused (AlreadyRunning). Tests: core/test/api/profiler.test.ts.
 *
 * At most `maxFiles` profiles are kept: the profiler lists the files it wrote, oldest first, in an
 * index file inside the directory, and writing one more deletes the oldest. Files it did not write
 * are never touched, and the bound survives restarts.
 */
import { Session } from 'node:inspector/promises';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { basename, join, resolve, sep } from 'node:path';
import { getHeapSnapshot } from 'node:v8';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { NodeError } from '@cornice/sdk';
import { sampleHeap } from './heap-profile.js';

export class ProfilerError extends NodeError<'AlreadyRunning' | 'NotRunning' | 'BadFileName' | 'Io' | 'Disabled'> {}

export interface ProfilerOptions {
  /** Profiles kept in the directory; writing another deletes the oldest (default 5). */
  maxFiles?: number;
  /** Whether full heap snapshots may be taken (--profile-heap-snapshot-enabled; default false). */
  heapSnapshots?: boolean;
  /** The sampling window's timer (tests shorten it). */
  wait?: (ms: number) => Promise<void>;
}

export const MEMORY_PROFILE_BUSY = 'a memory profile is already being taken (one at a time); try again when it finishes';
export const SNAPSHOTS_DISABLED =
  'full heap snapshots are off: one stops the node for seconds (tens of seconds on a large heap) and needs about the heap\'s size again in memory. ' +
  'Omit "kind" for a sampling heap profile, or start the node with --profile-heap-snapshot-enabled';

/** The profiler's list of the files it wrote, oldest first (JSON array of names). */
const INDEX_FILE = '.cornice-profiles.json';

export class Profiler {
  #cpu: { session: Session; file: string } | undefined;
  #starting = false;
  /** A memory profile (sampling or snapshot) is being taken. */
  #memoryBusy = false;
  readonly #heapSnapshots: boolean;
  readonly #wait: ((ms: number) => Promise<void>) | undefined;
  readonly #loopDelay: IntervalHistogram;
  readonly #since = new Date();
  readonly #maxFiles: number;
  /** The written files, oldest first; read from the index on first use. */
  #written: string[] | undefined;
  /** Index updates run one after another. */
  #indexQueue: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    opts: ProfilerOptions = {},
  ) {
    this.#maxFiles = opts.maxFiles ?? 5;
    this.#heapSnapshots = opts.heapSnapshots ?? false;
    this.#wait = opts.wait;
    // A sampling timer; 50 ms keeps an idle node quiet (10 ms woke it 100 times a second) and still
    // shows a loop blocked for longer than that.
    this.#loopDelay = monitorEventLoopDelay({ resolution: 50 });
    this.#loopDelay.enable();
  }

  /** The absolute path for `fileName`, refused unless it lies directly inside the profile dir. */
  path(fileName: string): string {
    const base = resolve(this.dir);
    const full = resolve(base, fileName);
    if (!full.startsWith(base + sep) || full.slice(base.length + 1).includes(sep)) {
      throw new ProfilerError('BadFileName', 'fileName must be a plain file name inside the profile directory');
    }
    if (fileName === INDEX_FILE) throw new ProfilerError('BadFileName', `fileName ${INDEX_FILE} is reserved for the profiler's index`);
    return full;
  }

  get cpuRunning(): boolean {
    return this.#cpu !== undefined || this.#starting;
  }

  async startCpu(fileName: string): Promise<void> {
    const file = this.path(fileName);
    if (this.cpuRunning) throw new ProfilerError('AlreadyRunning', 'cpu profiler already running');
    this.#starting = true;
    try {
      const session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      this.#cpu = { session, file };
    } finally {
      this.#starting = false;
    }
  }

  async stopCpu(): Promise<string> {
    const cpu = this.#cpu;
    if (!cpu) throw new ProfilerError('NotRunning', 'cpu profiler not running');
    this.#cpu = undefined;
    try {
      const { profile } = await cpu.session.post('Profiler.stop');
      await this.#write(cpu.file, JSON.stringify(profile));
      await this.#keep(cpu.file);
      return cpu.file;
    } finally {
      cpu.session.disconnect();
    }
  }

  /** Whether full heap snapshots are allowed. */
  get heapSnapshotsEnabled(): boolean {
    return this.#heapSnapshots;
  }

  /** A sampling heap profile over `durationMs` (.heapprofile JSON); AlreadyRunning while another memory profile runs. */
  async heapSampling(fileName: string, durationMs: number): Promise<string> {
    const file = this.path(fileName);
    return this.#oneMemoryProfile(async () => {
      const profile = await sampleHeap(durationMs, this.#wait);
      await this.#write(file, JSON.stringify(profile));
      await this.#keep(file);
      return file;
    });
  }

  /**
   * A full V8 heap snapshot: blocks the event loop while V8 walks the heap. Disabled unless the
   * profiler was made with `heapSnapshots` (test: profiler.test.ts "full heap snapshots are refused unless enabled").
   */
  async heapSnapshot(fileName: string): Promise<string> {
    const file = this.path(fileName);
    if (!this.#heapSnapshots) throw new ProfilerError('Disabled', SNAPSHOTS_DISABLED);
    return this.#oneMemoryProfile(async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 }); // heap snapshots hold secrets
      const tmp = `${file}.partial`;
      try {
        await pipeline(getHeapSnapshot(), createWriteStream(tmp, { mode: 0o600 }));
        await rename(tmp, file);
      } catch (e) {
        await rm(tmp, { force: true }).catch(() => undefined);
        throw new ProfilerError('Io', `cannot write heap snapshot: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      await this.#keep(file);
      return file;
    });
  }

  /** Runs one memory profile; refuses a second one while it runs (they would add up in memory and time). */
  async #oneMemoryProfile<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#memoryBusy) throw new ProfilerError('AlreadyRunning', MEMORY_PROFILE_BUSY);
    this.#memoryBusy = true;
    try {
      return await fn();
    } finally {
      this.#memoryBusy = false;
    }
  }

  /** Node's stand-in for mutex statistics (see the class comment). */
  async lockReport(fileName: string): Promise<string> {
    const file = this.path(fileName);
    const h = this.#loopDelay;
    const ms = (ns: number) => Math.round(ns / 1e3) / 1e3;
    const report = {
      kind: 'cornice lock profile: Node.js has no mutexes; this reports event-loop blocking instead',
      since: this.#since.toISOString(),
      at: new Date().toISOString(),
      eventLoopDelayMs: {
        min: ms(h.min),
        mean: ms(h.mean),
        p50: ms(h.percentile(50)),
        p90: ms(h.percentile(90)),
        p99: ms(h.percentile(99)),
        max: ms(h.max),
        samples: h.count,
      },
      activeResources: countBy(process.getActiveResourcesInfo()),
    };
    await this.#write(file, JSON.stringify(report, null, 2));
    await this.#keep(file);
    return file;
  }

  /** Records `file` as the newest profile and deletes the oldest ones beyond maxFiles. */
  #keep(file: string): Promise<void> {
    const run = this.#indexQueue.then(async () => {
      const name = basename(file);
      const written = (this.#written ??= await this.#readIndex()).filter((n) => n !== name);
      written.push(name);
      const kept: string[] = [];
      for (const [i, old] of written.entries()) {
        if (written.length - i <= this.#maxFiles) {
          kept.push(old);
          continue;
        }
        try {
          await rm(this.path(old), { force: true });
        } catch {
          kept.push(old); // still there (e.g. no permission): retried on the next write
        }
      }
      this.#written = kept;
      await this.#write(join(this.dir, INDEX_FILE), JSON.stringify(kept));
    });
    this.#indexQueue = run.catch(() => undefined);
    return run;
  }

  /** The index's names, oldest first; plain file names only (an edited index cannot point elsewhere). */
  async #readIndex(): Promise<string[]> {
    try {
      const names: unknown = JSON.parse(await readFile(join(this.dir, INDEX_FILE), 'utf8'));
      const plain = (n: unknown): n is string => typeof n === 'string' && basename(n) === n && !['', '.', '..', INDEX_FILE].includes(n);
      return Array.isArray(names) ? names.filter(plain) : [];
    } catch {
      return [];
    }
  }

  async #write(file: string, data: string): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await writeFile(file, data, { mode: 0o600 });
    } catch (e) {
      throw new ProfilerError('Io', `cannot write ${join(this.dir, '…')}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.#loopDelay.disable();
    if (this.#cpu) {
      this.#cpu.session.disconnect();
      this.#cpu = undefined;
    }
  }
}

function countBy(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[i] = (out[i] ?? 0) + 1;
  return out;
}

/** JavaScript stack of this moment plus the native stack, from Node's diagnostic report. */
export function stackTrace(): string {
  const report = process.report?.getReport() as
    | { javascriptStack?: { message?: string; stack?: string[] }; nativeStack?: Array<{ pc: string; symbol: string }> }
    | undefined;
  const js = report?.javascriptStack?.stack?.join('\n') ?? new Error('stacktrace').stack ?? '';
  const native = (report?.nativeStack ?? []).map((f) => `${f.pc} ${f.symbol}`).join('\n');
  return `JavaScript stack:\n${js}\n\nNative stack:\n${native}\n`;
}
