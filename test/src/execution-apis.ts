/**
 * The Ethereum execution-apis result schemas (test/fixtures/execution-apis, CC0; each file's commit in
 * its README) as one validator per eth_ method. The spec's build merges every schema file into
 * `components.schemas`; this does the same, in the fixture README's order, then applies the errata
 * listed there: places where the spec's own schemas reject what every client answers (shown by the
 * same test run against anvil).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { REPO } from './fixtures.js';

export const EXECUTION_APIS = join(REPO, 'test/fixtures/execution-apis');

/** Later files win on a duplicate name, as in the spec's build (execute.yaml's Withdrawal is the simulate one). */
const SCHEMA_FILES = ['base-types', 'block', 'withdrawal', 'transaction', 'receipt', 'filter', 'state', 'client', 'execute'];

type Schema = Record<string, any>;

export interface MethodSpec {
  readonly name: string;
  /** The fixture file it comes from (methods/<file>.yaml). */
  readonly file: string;
  readonly result: Schema;
}

function loadSchemas(): Record<string, Schema> {
  const all: Record<string, Schema> = {};
  for (const f of SCHEMA_FILES) Object.assign(all, parse(readFileSync(join(EXECUTION_APIS, 'schemas', `${f}.yaml`), 'utf8')));
  applyErrata(all);
  return all;
}

/** The errata of the fixture README, each one named there. */
function applyErrata(s: Record<string, Schema>): void {
  // 1. CallResultLog requires `blockhash`, a typo of the `blockHash` it defines.
  s.CallResultLog!.required = (s.CallResultLog!.required as string[]).map((k) => (k === 'blockhash' ? 'blockHash' : k));
  // 2. EthSimulateResult says `type: object` over a oneOf whose success branch is an array.
  delete s.EthSimulateResult!.type;
  // 3. A simulated block is allOf [Block, {calls}], but Block forbids any property it does not list,
  //    so `calls` itself fails: the block part is checked as Block without `calls`.
  s.EthSimulateBlockResultSingleSuccess = {
    type: 'object',
    required: ['calls'],
    properties: { calls: { $ref: '#/components/schemas/CallResults' } },
    allOf: [{ $ref: '#/components/schemas/BlockWithoutCalls' }],
  };
  s.BlockWithoutCalls = { ...s.Block, properties: { ...s.Block!.properties, calls: true } };
  // 4. client.yaml's eth_config refers to bytes4, which base-types.yaml of the fixture's commit lacks.
  s.bytes4 ??= { title: '4 hex encoded bytes', type: 'string', pattern: '^0x[0-9a-f]{8}$' };
  // 5. A failed call's `error` is oneOf two example errors written as schemas; with no schema keyword
  //    each accepts anything, so no value can match exactly one: read as {code, message}.
  s.CallResultFailure!.properties.error = {
    type: 'object',
    required: ['code', 'message'],
    properties: { code: { type: 'integer' }, message: { type: 'string' } },
  };
}

export function loadMethods(): MethodSpec[] {
  const out: MethodSpec[] = [];
  for (const file of readdirSync(join(EXECUTION_APIS, 'methods')).sort()) {
    for (const m of parse(readFileSync(join(EXECUTION_APIS, 'methods', file), 'utf8')) as { name: string; result: { schema: Schema } }[]) {
      out.push({ name: m.name, file, result: m.result.schema });
    }
  }
  return out;
}

/** One compiled validator per method; `errors` names the failing path and rule. */
export function resultValidators(): Map<string, ValidateFunction> {
  // The spec's schemas carry non-standard keywords (an error list's code/message): not strict.
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'spec', components: { schemas: loadSchemas() } });
  const out = new Map<string, ValidateFunction>();
  for (const m of loadMethods()) {
    out.set(m.name, ajv.compile({ $id: `result-${m.name}`, ...rebase(m.result) }));
  }
  return out;
}

/** Rewrites the spec's local refs (#/components/schemas/X) to the merged document's. */
function rebase(node: unknown): any {
  if (Array.isArray(node)) return node.map(rebase);
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' ? v.replace(/^#/, 'spec#') : rebase(v);
    return out;
  }
  return node;
}
