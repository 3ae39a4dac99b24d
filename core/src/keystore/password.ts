/**
 * Input checks: the 1024-character limit, well-formed Unicode, and password strength (the SPEC's
 * composition rule AND a zxcvbn score of at least 2, as the reference's zxcvbn check).
 *
 * zxcvbn runs in a worker thread, started on first use (node start-up does not load it): its
 * matching is super-linear, and exponential in the number of distinct "l33t" characters (@, $, 1,
 * !, |, ...). Measured on zxcvbn 4.4.2: 0.26 s for 32 such characters, 2.8 s for 64, 7 s for 100,
 * and minutes for 1024-character inputs — all of it blocking whichever thread runs it. So only the
 * first 100 characters are scored, in the worker, and a score that takes longer than
 * ZXCVBN_TIMEOUT_MS is given up on (the worker is replaced) and the password accepted: it passed
 * the composition rule, and only long inputs dense in symbols are that slow to score.
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
/** Longest a score may take before it is given up on. */
export const ZXCVBN_TIMEOUT_MS = 3000;

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
  resolve: (score: number | undefined) => void;
  reject: (e: unknown) => void;
}

/** One lazily started worker scoring one password at a time; idle, it does not keep node alive. */
class ZxcvbnScorer {
  #worker: Worker | undefined;
  #queue: Job[] = [];
  #current: Job | undefined;
  #timer: NodeJS.Timeout | undefined;
  #nextId = 0;
  /** Workers started so far (tests). */
  started = 0;

  score(password: string, userInputs: string[]): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ req: { id: this.#nextId++, password: head(password), userInputs: userInputs.map(head) }, resolve, reject });
      this.#pump();
    });
  }

  #start(): Worker {
    const w = new Worker(new URL('./zxcvbn-worker.js', import.meta.url));
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
    clearTimeout(this.#timer);
    this.#timer = undefined;
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
    this.#timer = setTimeout(() => {
      // Too slow: give up on this score and replace the worker (terminating is the only way to stop it).
      this.#worker = undefined;
      void w.terminate();
      this.#finish();
      job.resolve(undefined);
    }, ZXCVBN_TIMEOUT_MS);
    w.postMessage(job.req);
  }
}

const scorer = new ZxcvbnScorer();

/** How many zxcvbn workers were started (tests: 0 until the first score). */
export function zxcvbnWorkersStarted(): number {
  return scorer.started;
}

/**
 * The zxcvbn score (0..4) of the password's first ZXCVBN_MAX_CHARS characters, or undefined when
 * scoring took longer than ZXCVBN_TIMEOUT_MS.
 */
export function passwordScore(password: string, userInputs: string[] = []): Promise<number | undefined> {
  return scorer.score(password, userInputs);
}

/**
 * The createUser strength rule. The cheap composition rule runs first; the username is given to
 * zxcvbn as a user input, so a password built from it scores lower.
 */
export async function isStrongPassword(password: string, username = ''): Promise<boolean> {
  if (!meetsCompositionRule(password)) return false;
  const score = await passwordScore(password, username ? [username] : []);
  return score === undefined || score >= MIN_ZXCVBN_SCORE;
}
