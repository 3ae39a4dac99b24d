/**
 * RPC conformance sweep: from a service declaration, generates malformed calls for every method —
 * omitted/null/array/scalar params, each field with wrong types, oversized strings —
 * so a test can assert each gets a clear error (never -32603) and the node keeps serving; an unknown
 * field must be ignored (the call answers as without it).
 * `maxSizeCases`/`maxSizeSweep` send each string field its LARGEST legal-shaped value instead,
 * while polling /ext/health, so a test can assert no field's checks hold the event loop.
 */
import { cb58Encode, type MethodDef, type Parser, type ServiceDef } from '@cornice/sdk';
import { postRpc, type RpcReply } from './rpc.js';

export interface SweepCase {
  method: string;
  label: string;
  params: unknown;
  /** When set, the error must be -32602 and name this field. */
  expectField?: string;
  /** When true, a success is acceptable (e.g. omitted params for a method that takes none). */
  mayPass?: boolean;
}

const wrongValues: Record<string, unknown[]> = {
  string: [42, true, {}, [], null],
  uint: [-1, 1.5, 'abc', '-3', true, {}, [], '99999999999999999999999999999', null],
  uint64: [-1, 1.5, 'abc', '0x10', '18446744073709551616', true, {}, [], null],
  bool: ['true', 1, {}, [], null],
  cb58: [42, 'not-cb58!', '', {}, [], null, '1111'],
  id: [42, 'not-cb58!', '', {}, null, '1111'],
  shortId: [42, 'not-cb58!', '', {}, null, '1111'],
  enum: [42, 'no-such-value', {}, null],
  array: ['x', 42, {}, null],
  object: ['x', 42, [], null],
  json: [],
};

export function sweepCases(service: ServiceDef): SweepCase[] {
  const out: SweepCase[] = [];
  for (const [name, def] of Object.entries(service.methods) as Array<[string, MethodDef<unknown, unknown>]>) {
    const method = `${service.name}.${name}`;
    const fields = def.params.fields ?? {};
    const required = Object.entries(fields).filter(([, p]) => !p.optional);
    const none = required.length === 0;
    out.push({ method, label: 'params omitted', params: undefined, mayPass: none });
    out.push({ method, label: 'params null', params: null, mayPass: none });
    out.push({ method, label: 'params {}', params: {}, mayPass: none, ...(none ? {} : { expectField: required[0]![0] }) });
    out.push({ method, label: 'params []', params: [], mayPass: none });
    out.push({ method, label: 'params [1, 2]', params: [1, 2] });
    out.push({ method, label: 'params [42]', params: [42] });
    out.push({ method, label: 'unknown field ignored', params: { __bogus: 1 }, mayPass: none, ...(none ? {} : { expectField: required[0]![0] }) });
    for (const [field, parser] of Object.entries(fields)) {
      if (parser.item) out.push(...itemCases(method, field, parser));
      for (const value of wrongValues[parser.kind] ?? []) {
        if (value === null && parser.optional) continue;
        out.push({ method, label: `${field} = ${JSON.stringify(value)}`, params: { [field]: value }, expectField: field });
      }
      if (parser.kind === 'string' || parser.kind === 'cb58' || parser.kind === 'id' || parser.kind === 'shortId') {
        const max = parser.max ?? 65_536;
        out.push({ method, label: `${field} oversized (${max + 1})`, params: { [field]: 'x'.repeat(max + 1) }, expectField: field });
      }
      if (parser.kind === 'array' && parser.max !== undefined) {
        out.push({ method, label: `${field} with ${parser.max + 1} items`, params: { [field]: Array(parser.max + 1).fill(null) }, expectField: field });
      }
    }
  }
  return out;
}

function itemCases(method: string, field: string, parser: Parser<unknown>): SweepCase[] {
  const item = parser.item!;
  const bad = (wrongValues[item.kind] ?? []).filter((v) => v !== null);
  return bad.slice(0, 3).map((v) => ({ method, label: `${field}[0] = ${JSON.stringify(v)}`, params: { [field]: [v] }, expectField: `${field}[0]` }));
}

/**
 * Sends every sweep case of `services` to `url` and returns the problems found (empty = pass): a
 * success where an error was due, a -32603, an unexpected code, an empty message, or an invalid-
 * params error that does not name the field.
 */
export async function rpcSweep(url: string, services: readonly ServiceDef[]): Promise<string[]> {
  const problems: string[] = [];
  for (const service of services) {
    for (const c of sweepCases(service)) {
      const what = `${c.method} ${c.label}`;
      let r: RpcReply;
      try {
        r = await postRpc(url, c.method, c.params);
      } catch {
        problems.push(`${what}: the reply is not JSON`);
        continue;
      }
      if (!r.error) {
        if (!c.mayPass) problems.push(`${what}: succeeded but should have failed`);
        continue;
      }
      const { code, message } = r.error;
      if (code === -32603) problems.push(`${what}: internal error -32603 (${message})`);
      else if (![-32600, -32602, -32000].includes(code)) problems.push(`${what}: unexpected code ${code}`);
      else if (!message) problems.push(`${what}: empty error message`);
      else if (c.expectField !== undefined && (code !== -32602 || !message.startsWith(`${c.expectField}:`))) {
        problems.push(`${what}: expected -32602 naming ${c.expectField}, got ${code} "${message}"`);
      }
    }
  }
  return problems;
}

/**
 * The key a max-size case ends with: `field` again in another case, which the params parser refuses
 * as a duplicate after parsing every field before it (sdk test/rpc/params.test.ts).
 */
export function sweepEndKey(field: string): string {
  return field.toUpperCase() !== field ? field.toUpperCase() : field.toLowerCase();
}

/**
 * The largest legal-shaped value of a string-like parser (strings: `max` characters; cb58 with a
 * byte bound: the cb58 of that many 0xff bytes, exactly `max` characters; other cb58 kinds: `max`
 * base58 digits), descending into objects and arrays (one item); undefined for other kinds.
 */
export function largestValue(parser: Parser<unknown>): unknown {
  switch (parser.kind) {
    case 'string':
      return 'x'.repeat(parser.max ?? 65_536);
    case 'cb58':
      return parser.maxBytes !== undefined ? cb58Encode(new Uint8Array(parser.maxBytes).fill(0xff)) : 'z'.repeat(parser.max ?? 64);
    case 'id':
    case 'shortId':
      return 'z'.repeat(parser.max ?? 64);
    case 'array': {
      const item = parser.item && largestValue(parser.item);
      return item === undefined ? undefined : [item];
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(parser.fields ?? {})) {
        const v = largestValue(field);
        if (v !== undefined) out[name] = v;
      }
      return Object.keys(out).length ? out : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * One call per method and top-level field that holds strings: the field's largest value, then the
 * same field again (sweepEndKey), so the whole value is parsed (and decoded) and the call is then
 * refused before the method runs: no side effects, whatever the method.
 */
export function maxSizeCases(service: ServiceDef): SweepCase[] {
  const out: SweepCase[] = [];
  for (const [name, def] of Object.entries(service.methods) as Array<[string, MethodDef<unknown, unknown>]>) {
    for (const [field, parser] of Object.entries(def.params.fields ?? {})) {
      const value = largestValue(parser);
      if (value === undefined) continue;
      out.push({ method: `${service.name}.${name}`, label: `${field} at its largest`, params: { [field]: value, [sweepEndKey(field)]: 1 } });
    }
  }
  return out;
}

export interface MaxSizeSweepReport {
  /** As rpcSweep's: empty = pass. */
  problems: string[];
  cases: number;
  /** Latencies of the health polls made meanwhile, ms. */
  healthMs: number[];
}

/**
 * Sends every max-size case of `services` to `url`, one at a time, while polling `healthUrl`
 * (GET) back to back. A problem is a reply that is not JSON, a -32603, or anything but a -32602.
 */
export async function maxSizeSweep(url: string, services: readonly ServiceDef[], healthUrl: string): Promise<MaxSizeSweepReport> {
  const cases = services.flatMap(maxSizeCases);
  const bodies = cases.map((c) => ({ c, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: c.method, params: c.params }) }));
  const problems: string[] = [];
  const health = pollHealth(healthUrl);
  const send = async () => {
    for (const { c, body } of bodies) {
      const what = `${c.method} ${c.label}`;
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      let reply: RpcReply;
      try {
        reply = (await res.json()) as RpcReply;
      } catch {
        problems.push(`${what}: the reply is not JSON (HTTP ${res.status})`);
        continue;
      }
      if (reply.error?.code !== -32602) problems.push(`${what}: expected -32602, got ${JSON.stringify(reply.error ?? reply.result)}`);
    }
  };
  await send().finally(() => health.stop());
  return { problems, cases: cases.length, healthMs: await health.stop() };
}

/** Polls `healthUrl` (GET) back to back until stopped; stop() gives each poll's latency in ms. */
export function pollHealth(healthUrl: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let done = false;
  const loop = (async () => {
    while (!done) {
      const t0 = performance.now();
      await (await fetch(healthUrl)).arrayBuffer();
      latencies.push(performance.now() - t0);
    }
  })();
  return {
    stop: async () => {
      done = true;
      await loop;
      return latencies;
    },
  };
}
