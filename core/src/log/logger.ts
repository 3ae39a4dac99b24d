/**
 * The node's structured logger: one JSON object per line,
 * `{"time": "<ISO 8601>", "level": "info", "msg": "...", ...fields}`.
 *
 * - Messages are constant strings; context goes in fields, so a message can be searched for.
 * - Values that JSON cannot carry are converted: bigint -> decimal string, Uint8Array (and Buffer)
 *   -> hex string, Error -> {message, code, stack}, Date -> ISO string, Map -> object, Set -> array,
 *   objects with their own toString (IDs) -> that string, cycles -> "[circular]".
 * - Defensive redaction: a field (at any depth) whose name looks like a secret is written as
 *   "[redacted]", whatever its value.
 * - A level below the configured one is a no-op function: no clock read, no serialization.
 */
import { silentLogger, type LogFields, type Logger, type LogLevel } from '@cornice/sdk';

/** The levels in increasing severity; `off` disables everything. */
export const logLevels: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'off'];

export type EmittingLevel = Exclude<LogLevel, 'off'>;
export const emittingLevels: readonly EmittingLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

export interface CreateLoggerOptions {
  /** Lines below this level are dropped; `off` drops everything. */
  level: LogLevel;
  /** Receives each line, without the trailing newline. Default: `process.stdout.write(line + '\n')`. */
  write?: (line: string) => void;
  /** Time source for the `time` field. Default: `() => new Date()`. */
  clock?: () => Date;
  /** Fields added to every line (as `child(fields)` would). */
  fields?: LogFields;
}

/** Field names that are never written as they are. */
export const redactedFieldPattern = /pass(word)?|secret|private[ _-]?key|privateKey|seed|mnemonic/i;
export const REDACTED = '[redacted]';

/** Keys written by the logger itself; a field with one of these names is written as `_<name>`. */
const reservedKeys = new Set(['time', 'level', 'msg']);
const maxDepth = 8;

function levelIndex(level: LogLevel): number {
  return logLevels.indexOf(level);
}

function noop(): void {}

/** Whether `log` drops every line of `level` unseen (below a createLogger's level, or silentLogger); false when unknown. */
export function dropsLevel(log: Logger, level: EmittingLevel): boolean {
  return log[level] === noop || log[level] === silentLogger[level];
}

function defaultWrite(line: string): void {
  process.stdout.write(line + '\n');
}

const hexTable = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += hexTable[bytes[i]!];
  return s;
}

function hasOwnToString(value: object): boolean {
  for (let proto = Object.getPrototypeOf(value); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (Object.hasOwn(proto, 'toString')) return true;
  }
  return false;
}

/** Converts a field value into something `JSON.stringify` writes faithfully. */
function toJsonValue(value: unknown, depth: number, seen: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString(10);
    case 'undefined':
      return undefined;
    case 'symbol':
      return value.toString();
    case 'function':
      return `[function ${value.name || 'anonymous'}]`;
  }
  if (value === null) return null;
  const obj = value as object;
  if (obj instanceof Uint8Array) return toHex(obj);
  if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? 'Invalid Date' : obj.toISOString();
  if (seen.has(obj)) return '[circular]';
  if (depth >= maxDepth) return '[too deep]';
  seen.add(obj);
  try {
    if (obj instanceof Error) {
      const out: Record<string, unknown> = { message: obj.message };
      const code = (obj as { code?: unknown }).code;
      if (code !== undefined) out.code = toJsonValue(code, depth + 1, seen);
      if (obj.stack !== undefined) out.stack = obj.stack;
      return out;
    }
    if (Array.isArray(obj)) return obj.map((v) => toJsonValue(v, depth + 1, seen) ?? null);
    if (obj instanceof Set) return [...obj].map((v) => toJsonValue(v, depth + 1, seen) ?? null);
    if (obj instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of obj) {
        const key = String(k);
        out[key] = redactedFieldPattern.test(key) ? REDACTED : toJsonValue(v, depth + 1, seen);
      }
      return out;
    }
    if (ArrayBuffer.isView(obj)) return Array.from(obj as unknown as ArrayLike<number>);
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return toJsonValue(toJSON.call(obj), depth + 1, seen);
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null && hasOwnToString(obj)) return String(obj);
    return sanitizeFields(obj as Record<string, unknown>, depth + 1, seen);
  } finally {
    seen.delete(obj);
  }
}

function sanitizeFields(fields: Record<string, unknown>, depth: number, seen: Set<object>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    out[key] = redactedFieldPattern.test(key) ? REDACTED : toJsonValue(fields[key], depth, seen);
  }
  return out;
}

/** Sanitizes top-level fields; reserved names are prefixed with `_`. */
function sanitizeTop(fields: LogFields, into: Record<string, unknown>): void {
  const seen = new Set<object>();
  for (const key of Object.keys(fields)) {
    const name = reservedKeys.has(key) ? `_${key}` : key;
    into[name] = redactedFieldPattern.test(key) ? REDACTED : toJsonValue(fields[key], 1, seen);
  }
}

interface Sink {
  threshold: number;
  write: (line: string) => void;
  clock: () => Date;
}

function build(sink: Sink, bound: Record<string, unknown>): Logger {
  const emit = (level: EmittingLevel, msg: string, fields?: LogFields): void => {
    let line: string;
    try {
      const record: Record<string, unknown> = { time: sink.clock().toISOString(), level, msg };
      Object.assign(record, bound);
      if (fields) sanitizeTop(fields, record);
      line = JSON.stringify(record);
    } catch (err) {
      // A field that cannot be serialized (e.g. a throwing getter) must not take the caller down.
      let time: string;
      try {
        time = sink.clock().toISOString();
      } catch {
        time = new Date().toISOString();
      }
      line = JSON.stringify({ time, level, msg, logError: err instanceof Error ? err.message : String(err) });
    }
    sink.write(line);
  };
  const logger = {
    child(fields: LogFields): Logger {
      const merged: Record<string, unknown> = { ...bound };
      sanitizeTop(fields, merged);
      return build(sink, merged);
    },
  } as Logger;
  for (const level of emittingLevels) {
    logger[level] =
      levelIndex(level) >= sink.threshold ? (msg: string, fields?: LogFields) => emit(level, msg, fields) : noop;
  }
  return logger;
}

/** A JSON-lines logger (see the module comment). */
export function createLogger(opts: CreateLoggerOptions): Logger {
  const sink: Sink = {
    threshold: levelIndex(opts.level) < 0 ? levelIndex('info') : levelIndex(opts.level),
    write: opts.write ?? defaultWrite,
    clock: opts.clock ?? (() => new Date()),
  };
  const bound: Record<string, unknown> = {};
  if (opts.fields) sanitizeTop(opts.fields, bound);
  return build(sink, bound);
}
