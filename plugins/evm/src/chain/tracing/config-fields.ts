/**
 * A tracer's `tracerConfig` read as geth reads it (Go's JSON decoding into a struct of booleans): a
 * key matches its field in any letter case, the last of two keys for one field wins, an unknown key
 * is ignored, null leaves the default, and a value of another type is refused with geth's text,
 * which names the field ("json: cannot unmarshal string into Go struct field
 * prestateTracerConfig.diffMode of type bool").
 * Tests: tracers.test.ts "tracerConfig".
 */
import { TracerConfigError } from './tracer.js';

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  return typeof v === 'string' ? 'string' : 'object';
}

/** `struct`: the Go struct's name in geth's text; `fields`: its boolean fields' JSON names (all default false). */
export function boolConfig<K extends string>(config: Readonly<Record<string, unknown>>, struct: string, fields: readonly K[]): Record<K, boolean> {
  const out = Object.fromEntries(fields.map((f) => [f, false])) as Record<K, boolean>;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new TracerConfigError(`json: cannot unmarshal ${jsonKind(config)} into Go value of type native.${struct}`);
  }
  for (const [key, value] of Object.entries(config)) {
    const field = fields.find((f) => f === key) ?? fields.find((f) => f.toLowerCase() === key.toLowerCase());
    if (field === undefined || value === null) continue;
    if (typeof value !== 'boolean') throw new TracerConfigError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${field} of type bool`);
    out[field] = value;
  }
  return out;
}
