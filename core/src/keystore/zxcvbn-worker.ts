/**
 * Worker thread that scores passwords with zxcvbn (see password.ts for why it is not run on the
 * main thread). Once zxcvbn and its dictionaries are loaded and one warm-up score has run (so
 * nothing zxcvbn does on first use is left), it posts {ready: true}: the scorer's deadlines run only
 * from then on.
 * Messages in: {id, password, userInputs}; out: {id, score} or {id, failed: true}.
 */
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import type zxcvbnType from 'zxcvbn';

export interface ScoreRequest {
  id: number;
  password: string;
  userInputs: string[];
}
export type ScoreResponse = { id: number; score: number } | { id: number; failed: true };
/** What a worker posts: once {ready: true}, then one response per request. */
export type WorkerMessage = ScoreResponse | { ready: true };

const zxcvbn = createRequire(import.meta.url)('zxcvbn') as typeof zxcvbnType;

zxcvbn('warm-up Password1!', []);

parentPort?.on('message', (req: ScoreRequest) => {
  let res: ScoreResponse;
  try {
    res = { id: req.id, score: zxcvbn(req.password, req.userInputs).score };
  } catch {
    res = { id: req.id, failed: true };
  }
  parentPort?.postMessage(res);
});

parentPort?.postMessage({ ready: true } satisfies WorkerMessage);
