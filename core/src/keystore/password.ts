/**
 * Input checks: the 1024-character limit, well-formed Unicode, and password strength (a
 * composition rule AND a zxcvbn score of at least 2, as the reference node checks; api/keystore/API.md).
 *
 * zxcvbn runs in a worker thread, started on first use (node start-up does not load it): its
 * matching is super-linear, and exponential in the number of distinct "l33t" characters (@, $, 1,
 * !, |, ...): seconds for 64 such characters, minutes for a 1024-character input, all of it blocking
 * whichever thread runs it. So only the first 100 characters are scored, in the worker, one at a
 * time. Test: password.test.ts "a password that zxcvbn takes seconds to score".
 *
 * Two bounds, for two kinds of slowness:
 * - A check's deadline, ZXCVBN_TIMEOUT_MS, bounds what callers can make slow: scoring its password
 *   and waiting behind the checks queued before it. It runs only while a worker is up: the time
 *   a worker takes to start (a thread, zxcvbn's module and its dictionaries, one warm-up score —
 *   seconds on a loaded machine) is not counted, nor the restart after a stuck worker was ended
 *   (a paused check keeps what is left of its deadline). Past it the check fails CLOSED (the
 *   password is refused with a clear error, and a worker stuck on a slow score is replaced), so one
 *   slow score delays the others by at most that. Test: password.test.ts "a slow-starting worker".
 * - Start-up has its own, generous bound, ZXCVBN_START_TIMEOUT_MS: a worker that has not said it
 *   is ready by then is ended and every check waiting for it is refused ('StrengthCheckUnavailable');
 *   the next check starts a new one. A worker that fails while starting refuses them at once.
 * So nothing waits forever: a check waits through at most one start-up per check queued before it
 * (each restart ends one of them) plus one, each bounded, and its own deadline.
 * At most ZXCVBN_MAX_QUEUED checks wait behind the running one; more are refused at once ("busy").
 */
import { Worker } from 'node:worker_threads';
import { KeystoreError } from './errors.js';
import type { ScoreRequest, WorkerMessage } from './zxcvbn-worker.js';

/** Most characters (Unicode code points) a username or a password may have. */
export const MAX_INPUT_CHARS = 1024;
/** Fewest characters of an acceptable password. */
export const MIN_PASSWORD_CHARS = 8;
/** Lowest acceptable zxcvbn score (0..4). */
export const MIN_ZXCVBN_SCORE = 2;
/** Only this many leading characters of a password (and of a user input) are scored. */
export const ZXCVBN_MAX_CHARS = 100;
/** Longest a check may take while a worker is up (waiting behind others included), before it is refused. */
export const ZXCVBN_TIMEOUT_MS = 1000;
/** Longest a worker may take to start (thread, zxcvbn's dictionaries, a warm-up score) before the checks waiting for it are refused. */
export const ZXCVBN_START_TIMEOUT_MS = 30_000;
/** Checks waiting behind the running one; one more is refused. */
export const ZXCVBN_MAX_QUEUED = 8;

export const STRENGTH_TIMEOUT =
  'password strength could not be checked in time; try again (long passwords dense in symbols take longest to check)';
export const STRENGTH_BUSY = 'password strength checker busy: too many checks waiting; try again';
export const STRENGTH_UNAVAILABLE = `password strength checker did not start within ${ZXCVBN_START_TIMEOUT_MS / 1000} s (the machine may be overloaded); try again`;
export const STRENGTH_FAILED = 'password strength check failed';

/** True when `s` has more than `max` code points (stops counting early; a huge string costs little). */
export function exceedsChars(s: string, max = MAX_INPUT_CHARS): boolean {
  if (s.length <= max) return false; // code points <= UTF-16 units
  if (s.length > 2 * max) return true; // code points >= units / 2
  let n = 0;
  for (const _ of s) if (++n > max) return true;
  return false;
}

/** True when `s` holds a lone surrogate (it would not survive UTF-8 encoding unchanged). */
export function hasLoneSurrogate(s: string): boolean {
  return /\p{Cs}/u.test(s);
}

/** At least 8 characters with an upper-case letter, a lower-case letter, a digit and a symbol. */
export function meetsCompositionRule(password: string): boolean {
  let chars = 0;
  for (const _ of password) if (++chars >= MIN_PASSWORD_CHARS) break;
  return (
    chars >= MIN_PASSWORD_CHARS &&
    /\p{Lu}/u.test(password) &&
    /\p{Ll}/u.test(password) &&
    /\p{Nd}/u.test(password) &&
    /[^\p{L}\p{N}\s]/u.test(password)
  );
}

function head(s: string): string {
  return s.length <= ZXCVBN_MAX_CHARS ? s : Array.from(s).slice(0, ZXCVBN_MAX_CHARS).join('');
}

interface Job {
  req: ScoreRequest;
  resolve: (score: number) => void;
  reject: (e: unknown) => void;
  /** What is left of the job's deadline, ms (it runs only while a worker is ready). */
  leftMs: number;
  /** While the deadline runs: its timer and when it was armed (now()). */
  timer: unknown;
  armedAt: number | undefined;
}

export interface ScorerOptions {
  /** Deadline of each check while a worker is up, ms (default ZXCVBN_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Longest a worker may take to report ready, ms (default ZXCVBN_START_TIMEOUT_MS). */
  startTimeoutMs?: number;
  /** Checks that may wait behind the running one (default ZXCVBN_MAX_QUEUED). */
  maxQueued?: number;
  /** The worker script (default zxcvbn-worker.js; tests give a slow one). */
  workerUrl?: URL;
  /** Timers and the clock they run on, ms (tests drive them by hand). */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
  now?: () => number;
}

/**
 * One lazily started worker scoring one password at a time; idle, it does not keep node alive.
 * A worker is usable once it posted `{ready: true}` (see zxcvbn-worker.ts).
 */
export class ZxcvbnScorer {
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  readonly #maxQueued: number;
  readonly #workerUrl: URL;
  readonly #setTimer: (fn: () => void, ms: number) => unknown;
  readonly #clearTimer: (timer: unknown) => void;
  readonly #now: () => number;
  #worker: Worker | undefined;
  /** The worker posted ready (deadlines run). */
  #ready = false;
  /** The start-up bound of the worker being started. */
  #startTimer: unknown;
  /** Callers of warm() waiting for the worker being started. */
  #warming: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  #queue: Job[] = [];
  #current: Job | undefined;
  #nextId = 0;
  /** Workers started so far (tests). */
  started = 0;

  constructor(opts: ScorerOptions = {}) {
    this.#timeoutMs = opts.timeoutMs ?? ZXCVBN_TIMEOUT_MS;
    this.#startTimeoutMs = opts.startTimeoutMs ?? ZXCVBN_START_TIMEOUT_MS;
    this.#maxQueued = opts.maxQueued ?? ZXCVBN_MAX_QUEUED;
    this.#workerUrl = opts.workerUrl ?? new URL('./zxcvbn-worker.js', import.meta.url);
    this.#setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.#clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout));
    this.#now = opts.now ?? (() => performance.now());
  }

  /**
   * The score (0..4); KeystoreError 'StrengthCheckTimeout' past the deadline, 'Busy' when the queue
   * is full, 'StrengthCheckUnavailable' when no worker came up within the start-up bound.
   */
  score(password: string, userInputs: string[]): Promise<number> {
    if (this.#queue.length >= this.#maxQueued && this.#current) {
      return Promise.reject(new KeystoreError('Busy', STRENGTH_BUSY));
    }
    return new Promise((resolve, reject) => {
      const job: Job = {
        req: { id: this.#nextId++, password: head(password), userInputs: userInputs.map(head) },
        resolve,
        reject,
        leftMs: this.#timeoutMs,
        timer: undefined,
        armedAt: undefined,
      };
      this.#queue.push(job);
      if (this.#ready) this.#arm(job);
      this.#pump();
    });
  }

  /** Starts the worker unless one is up; resolves once it is ready (rejects as a check waiting for it would). */
  warm(): Promise<void> {
    if (this.#ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#warming.push({ resolve, reject });
      this.#worker ??= this.#start();
      this.#worker.ref();
    });
  }

  /** Checks waiting now (tests). */
  get queued(): number {
    return this.#queue.length;
  }

  /** Whether a worker is up and checks' deadlines run (tests). */
  get ready(): boolean {
    return this.#ready;
  }

  #arm(job: Job): void {
    job.armedAt = this.#now();
    job.timer = this.#setTimer(() => this.#expire(job), job.leftMs);
  }

  /** Stops a job's deadline, keeping what is left of it. */
  #pause(job: Job): void {
    if (job.armedAt === undefined) return;
    this.#clearTimer(job.timer);
    job.leftMs = Math.max(0, job.leftMs - (this.#now() - job.armedAt));
    job.armedAt = undefined;
  }

  #expire(job: Job): void {
    job.armedAt = undefined;
    if (this.#current === job) {
      // Too slow: terminating the worker is the only way to stop a score; the next job gets a new
      // one, and the waiting jobs' deadlines stop while it starts.
      this.#current = undefined;
      this.#drop(this.#worker);
      this.#pump();
    } else {
      const at = this.#queue.indexOf(job);
      if (at < 0) return;
      this.#queue.splice(at, 1);
    }
    job.reject(new KeystoreError('StrengthCheckTimeout', STRENGTH_TIMEOUT));
  }

  /** Ends worker `w` if it is the current one; the waiting jobs' deadlines stop until another is ready. */
  #drop(w: Worker | undefined): void {
    if (!w || this.#worker !== w) return;
    this.#worker = undefined;
    this.#ready = false;
    this.#clearTimer(this.#startTimer);
    this.#startTimer = undefined;
    void w.terminate();
    for (const job of this.#queue) this.#pause(job);
    // A job whose deadline is used up by now is refused now, not once the next worker is up.
    const spent = this.#queue.filter((job) => job.leftMs <= 0);
    this.#queue = this.#queue.filter((job) => job.leftMs > 0);
    for (const job of spent) job.reject(new KeystoreError('StrengthCheckTimeout', STRENGTH_TIMEOUT));
  }

  /** The worker being started did not come up: it is ended, and everything waiting for it refused. */
  #failStart(w: Worker, error: KeystoreError): void {
    if (this.#worker !== w) return;
    this.#drop(w);
    const jobs = this.#queue.splice(0);
    const warming = this.#warming.splice(0);
    for (const job of jobs) job.reject(error);
    for (const waiter of warming) waiter.reject(error);
  }

  #start(): Worker {
    const w = new Worker(this.#workerUrl);
    this.started++;
    this.#ready = false;
    this.#startTimer = this.#setTimer(
      () => this.#failStart(w, new KeystoreError('StrengthCheckUnavailable', STRENGTH_UNAVAILABLE)),
      this.#startTimeoutMs,
    );
    w.on('message', (res: WorkerMessage) => {
      if (this.#worker !== w) return;
      if ('ready' in res) {
        if (this.#ready) return;
        this.#clearTimer(this.#startTimer);
        this.#startTimer = undefined;
        this.#ready = true;
        for (const job of this.#queue) this.#arm(job);
        for (const waiter of this.#warming.splice(0)) waiter.resolve();
        this.#pump();
        return;
      }
      const job = this.#current;
      if (!job || job.req.id !== res.id) return;
      this.#finish();
      if ('score' in res) job.resolve(res.score);
      else job.reject(new KeystoreError('Internal', STRENGTH_FAILED));
    });
    const lost = () => {
      if (this.#worker !== w) return;
      if (!this.#ready) {
        // Failing before it is ready, it would fail again: refuse what waits rather than loop.
        this.#failStart(w, new KeystoreError('Internal', `${STRENGTH_FAILED}: its worker did not start`));
        return;
      }
      const job = this.#current;
      this.#current = undefined;
      if (job) this.#pause(job);
      this.#drop(w);
      job?.reject(new KeystoreError('Internal', STRENGTH_FAILED));
      this.#pump();
    };
    w.on('error', lost);
    w.on('exit', lost);
    return w;
  }

  #finish(): void {
    if (this.#current) this.#pause(this.#current);
    this.#current = undefined;
    this.#pump();
  }

  #pump(): void {
    if (this.#current) return;
    if (this.#queue.length === 0) {
      if (this.#warming.length === 0) this.#worker?.unref();
      return;
    }
    const w = (this.#worker ??= this.#start());
    w.ref();
    if (!this.#ready) return; // the jobs wait, their deadlines stopped, until it posts ready
    const job = this.#queue.shift()!;
    this.#current = job;
    w.postMessage(job.req);
  }
}

const scorer = new ZxcvbnScorer();

/** How many zxcvbn workers were started (tests: 0 until the first score). */
export function zxcvbnWorkersStarted(): number {
  return scorer.started;
}

/**
 * The zxcvbn score (0..4) of the password's first ZXCVBN_MAX_CHARS characters. KeystoreError
 * 'StrengthCheckTimeout' when it was not scored within ZXCVBN_TIMEOUT_MS of a worker being up,
 * 'StrengthCheckUnavailable' when no worker came up within ZXCVBN_START_TIMEOUT_MS, 'Busy' when
 * too many checks wait.
 */
export function passwordScore(password: string, userInputs: string[] = [], by: ZxcvbnScorer = scorer): Promise<number> {
  return by.score(password, userInputs);
}

/**
 * The createUser strength rule. The cheap composition rule runs first; the username is given to
 * zxcvbn as a user input, so a password built from it scores lower. Rejects (fails closed) when
 * the score cannot be had in time.
 */
export async function isStrongPassword(password: string, username = '', by: ZxcvbnScorer = scorer): Promise<boolean> {
  if (!meetsCompositionRule(password)) return false;
  return (await passwordScore(password, username ? [username] : [], by)) >= MIN_ZXCVBN_SCORE;
}
