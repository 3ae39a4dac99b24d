/**
 * Input checks: the 1024-character limit, well-formed Unicode, and password strength (the SPEC's
 * composition rule AND a zxcvbn score of at least 2, as the reference's zxcvbn check).
 *
 * zxcvbn runs in a worker thread, started on first use (node start-up does not load it): its
 * matching is super-linear, and exponential in the number of distinct "l33t" characters (@, $, 1,
 * !, |, ...). Measured on zxcvbn 4.4.2: 0.26 s for 32 such characters, 2.8 s for 64, 7 s for 100,
 * and minutes for 1024-character inputs — all of it blocking whichever thread runs it. So only the
 * first 100 characters are scored, in the worker, one at a time. Every check has a deadline of
 * ZXCVBN_TIMEOUT_MS from when it was asked, waiting included: past it the check fails CLOSED (the
 * password is refused with a clear error, and a worker stuck on a slow score is replaced), so one
 * slow score delays the others by at most that. At most ZXCVBN_MAX_QUEUED checks wait behind the
 * running one; more are refused at once ("busy").
 */
import { Worker } from 'node:worker_threads';
import { KeystoreError } from './errors.js';
import type { ScoreRequest, ScoreResponse } from './zxcvbn-worker.js';

/** Most characters (Unicode code points) a username or a password may have. */
export const MAX_INPUT_CHARS = 1024;
/** Fewest characters of an acceptable password. */
export const MIN_PASSWORD_CHARS = 8;
/** Lowest acceptable zxcvbn score (0..4). */
export const MIN_ZXCVBN_SCORE = 2;
/** Only this many leading characters of a password (and of a user input) are scored. */
export const ZXCVBN_MAX_CHARS = 100;
/** Longest a check may take, from when it is asked (waiting included), before it is refused. */
export const ZXCVBN_TIMEOUT_MS = 1000;
/** Checks waiting behind the running one; one more is refused. */
export const ZXCVBN_MAX_QUEUED = 8;

export const STRENGTH_TIMEOUT =
  'password strength could not be checked in time; try again (long passwords dense in symbols take longest to check)';
export const STRENGTH_BUSY = 'password strength checker busy: too many checks waiting; try again';

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
  /** The job's deadline timer. */
  timer: unknown;
}

export interface ScorerOptions {
  /** Deadline of each check from when it is asked, ms (default ZXCVBN_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Checks that may wait behind the running one (default ZXCVBN_MAX_QUEUED). */
  maxQueued?: number;
  /** The worker script (default zxcvbn-worker.js; tests give a slow one). */
  workerUrl?: URL;
  /** Timers (tests drive them by hand). */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

/** One lazily started worker scoring one password at a time; idle, it does not keep node alive. */
export class ZxcvbnScorer {
  readonly #timeoutMs: number;
  readonly #maxQueued: number;
  readonly #workerUrl: URL;
  readonly #setTimer: (fn: () => void, ms: number) => unknown;
  readonly #clearTimer: (timer: unknown) => void;
  #worker: Worker | undefined;
  #queue: Job[] = [];
  #current: Job | undefined;
  #nextId = 0;
  /** Workers started so far (tests). */
  started = 0;

  constructor(opts: ScorerOptions = {}) {
    this.#timeoutMs = opts.timeoutMs ?? ZXCVBN_TIMEOUT_MS;
    this.#maxQueued = opts.maxQueued ?? ZXCVBN_MAX_QUEUED;
    this.#workerUrl = opts.workerUrl ?? new URL('./zxcvbn-worker.js', import.meta.url);
    this.#setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.#clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout));
  }

  /** The score (0..4); KeystoreError 'StrengthCheckTimeout' past the deadline, 'Busy' when the queue is full. */
  score(password: string, userInputs: string[]): Promise<number> {
    if (this.#queue.length >= this.#maxQueued && this.#current) {
      return Promise.reject(new KeystoreError('Busy', STRENGTH_BUSY));
    }
    return new Promise((resolve, reject) => {
      const job: Job = {
        req: { id: this.#nextId++, password: head(password), userInputs: userInputs.map(head) },
        resolve,
        reject,
        timer: undefined,
      };
      job.timer = this.#setTimer(() => this.#expire(job), this.#timeoutMs);
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Checks waiting now (tests). */
  get queued(): number {
    return this.#queue.length;
  }

  #expire(job: Job): void {
    if (this.#current === job) {
      // Too slow: terminating the worker is the only way to stop a score; the next job gets a new one.
      const w = this.#worker;
      this.#worker = undefined;
      void w?.terminate();
      this.#current = undefined;
      this.#pump();
    } else {
      const at = this.#queue.indexOf(job);
      if (at < 0) return;
      this.#queue.splice(at, 1);
    }
    job.reject(new KeystoreError('StrengthCheckTimeout', STRENGTH_TIMEOUT));
  }

  #start(): Worker {
    const w = new Worker(this.#workerUrl);
    this.started++;
    w.on('message', (res: ScoreResponse) => {
      const job = this.#current;
      if (this.#worker !== w || !job || job.req.id !== res.id) return;
      this.#finish();
      if ('score' in res) job.resolve(res.score);
      else job.reject(new KeystoreError('Internal', 'password strength check failed'));
    });
    const lost = () => {
      if (this.#worker !== w) return;
      this.#worker = undefined;
      const job = this.#current;
      this.#finish();
      job?.reject(new KeystoreError('Internal', 'password strength check failed'));
    };
    w.on('error', lost);
    w.on('exit', lost);
    return w;
  }

  #finish(): void {
    if (this.#current) this.#clearTimer(this.#current.timer);
    this.#current = undefined;
    this.#pump();
  }

  #pump(): void {
    if (this.#current) return;
    const job = this.#queue.shift();
    if (!job) {
      this.#worker?.unref();
      return;
    }
    const w = (this.#worker ??= this.#start());
    w.ref();
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
 * 'StrengthCheckTimeout' when it was not scored within ZXCVBN_TIMEOUT_MS, 'Busy' when too many
 * checks wait.
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
