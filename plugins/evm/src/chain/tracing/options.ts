/**
 * A tracer's config fields, read as geth decodes them (absent or null: the default; another type: an
 * error naming the field), and a result rendered as JSON text already.
 */
import { TracerConfigError } from './tracer.js';

/** A tracer's result that is JSON text already (the struct logger renders each log as it comes). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The JSON text of a tracer's result. */
export function jsonTextOf(result: unknown): string {
  return result instanceof JsonText ? result.text : JSON.stringify(result);
}

export function flag(config: Readonly<Record<string, unknown>>, key: string, where: string): boolean {
  const v = config[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new TracerConfigError(`${where}${key}: want a boolean, got ${kind(v)}`);
  return v;
}

/** A non-negative integer field (0 when absent). */
export function count(config: Readonly<Record<string, unknown>>, key: string, where: string): number {
  const v = config[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new TracerConfigError(`${where}${key}: want a non-negative integer, got ${kind(v)}`);
  return v;
}

function kind(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? `the number ${v}` : 'a fraction';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
