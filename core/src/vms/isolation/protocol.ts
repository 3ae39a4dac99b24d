/**
 * The messages between a chain's host (main thread) and its VM's worker thread. Both sides send the
 * same three shapes over the worker's port: a request (`req`, answered once by a `res` with the same
 * id) and a fire-and-forget event (`evt`). Payloads are structured-clone values: bytes as
 * Uint8Array, bigints as bigint, service params/results as JSON text. Errors cross as plain
 * `{ name, message, code, data, field }` and are rebuilt NodeError-branded on the other side, so
 * `isNodeError`/`hasErrorCode` keep working (never `instanceof`).
 */
import { isNodeError, jsonReplacer, NodeError } from '@cornice/sdk';

export interface WireError {
  name: string;
  message: string;
  /** Set when the error was a NodeError (from any copy of the sdk). */
  code?: string;
  data?: unknown;
  /** InvalidParamsError's field name. */
  field?: string;
}

export interface Request {
  t: 'req';
  id: number;
  op: string;
  args: unknown[];
}

export type Response = { t: 'res'; id: number; ok: true; value: unknown } | { t: 'res'; id: number; ok: false; error: WireError };

export interface Event {
  t: 'evt';
  op: string;
  args: unknown[];
}

/** Messages sent together (held ones with the next; see Channel.request's `hold`): received in order. */
export interface Batch {
  t: 'batch';
  msgs: Array<Request | Response | Event>;
}

export type Message = Request | Response | Event | Batch;

/** What the host gives the worker at start (workerData). */
export interface WorkerStart {
  /** `file:` URL of the plugin module exporting `vmFactory`. */
  moduleUrl: string;
  /** [flag: Int32, value: Float64 at byte 8]: the host's clock, read synchronously (see worker-main). */
  clock: SharedArrayBuffer | undefined;
}

/** An error thrown across the boundary: branded like any NodeError, with the original's name, code and data. */
export class RemoteError extends NodeError<string> {
  constructor(w: WireError) {
    super(w.code ?? 'VMError', w.message, w.data);
    this.name = w.name;
    if (w.field !== undefined) (this as { field?: string }).field = w.field;
  }
}

/** Data that survives the crossing (JSON values); anything else is dropped rather than failing the reply. */
function cloneableData(data: unknown): unknown {
  if (data === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(data, jsonReplacer)) as unknown;
  } catch {
    return undefined;
  }
}

export function toWireError(e: unknown): WireError {
  try {
    if (isNodeError(e)) {
      const field = (e as { field?: unknown }).field;
      const data = cloneableData(e.data);
      return {
        name: String(e.name),
        message: String(e.message),
        code: e.code,
        ...(data !== undefined ? { data } : {}),
        ...(typeof field === 'string' ? { field } : {}),
      };
    }
    if (e instanceof Error) return { name: e.name, message: e.message };
    return { name: 'Error', message: String(e) };
  } catch {
    return { name: 'Error', message: 'an unprintable error' };
  }
}

export const fromWireError = (w: WireError): Error => new RemoteError(w);

/**
 * Fields of a log line or metric made safe to post: JSON values (bigint as string, bytes as hex,
 * Errors as name and message).
 */
export function plainFields(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (fields === undefined) return undefined;
  try {
    return JSON.parse(
      JSON.stringify(fields, function (this: unknown, key: string, value: unknown) {
        if (value instanceof Error) return { name: value.name, message: value.message, ...(isNodeError(value) ? { code: value.code } : {}) };
        return jsonReplacer.call(this, key, value);
      }),
    ) as Record<string, unknown>;
  } catch {
    return { fields: 'unserialisable' };
  }
}

/** How many entries one page of a store iteration carries (one message per page, not per key). */
export const ITERATE_PAGE = 256;

/**
 * How long setPreference (host) and its answer (worker) wait to go with the next message (Channel
 * `holdMs`): the engine's next call follows within a turn or two; the answer only clears the host's
 * deadline and logs a failure, so it may wait for the accept's answer.
 */
export const HOLD_PREFERENCE_MS = 1;
export const HOLD_PREFERENCE_ANSWER_MS = 5;
