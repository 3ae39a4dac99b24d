/**
 * Genesis files: JSON describing the chains a network starts with (and, optionally, its
 * validators and funded accounts), replacing the built-in local genesis. Example:
 *   { "chains": [ { "name": "Simple Timestamp Server", "vm": "timestamp", "aliases": ["timestamp"] },
 *                 { "name": "kv", "vm": "kvvm", "genesisData": "<cb58>", "aliases": ["kv"] },
 *                 { "name": "X-Chain", "vm": "avm", "genesis": { "asset1": {...} } } ],
 *     "validators": [ { "nodeID": "<cb58>", "weight": "20000000000000", "destination": "<address>" } ],
 *     "accounts": [ { "address": "<cb58>", "balance": "20000000000000" } ] }
 * The file becomes a platform genesis: its chains genesis CreateChainTxs (`vm` is a vmID or a VM
 * alias; each chain's ID is that tx's ID, as the reference derives genesis chain IDs), its
 * validators genesis validators of the Default Subnet (from genesis time to far in the future,
 * rewards to `destination`, by default the first account), its accounts funded platform accounts.
 * "validators" may be left out only on the local network (its five stakers are the default).
 * A chain's genesis is `genesisData` (cb58 bytes) or `genesis` (JSON, encoded by json.ts: through
 * the VM's buildGenesis static method when it has one, else as UTF-8 JSON), or neither (empty).
 */
import { Id, NodeError, ShortId, cb58Decode, type BoundService, type Validator } from '@cornice/sdk';
import { networkLabel } from '../config/config.js';
import { genesisOf, type GenesisSpec, type NetworkGenesis } from './genesis.js';
import { encodeJsonGenesis, findBuildGenesis } from './json.js';

export class GenesisError extends NodeError<'Invalid'> {}

export async function parseGenesisFile(
  text: string,
  file: string,
  networkId: number,
  resolveVm: (vm: string) => Id,
  /** Validators when the file lists none; undefined: the file must list them. */
  defaultValidators: GenesisSpec['validators'] | undefined,
  /** A VM's static services, where a JSON `genesis` finds its buildGenesis; none by default. */
  staticServices: (vmId: Id) => readonly BoundService[] = () => [],
): Promise<NetworkGenesis> {
  const fail = (msg: string): never => {
    throw new GenesisError('Invalid', `genesis file ${file}: ${msg}`);
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return fail(`not valid JSON (${(e as Error).message})`);
  }
  const g = json as { chains?: unknown; validators?: unknown; accounts?: unknown };
  if (typeof g !== 'object' || g === null || !Array.isArray(g.chains)) return fail('expected an object with a "chains" array');
  const known = new Set(['chains', 'validators', 'accounts']);
  for (const k of Object.keys(g)) if (!known.has(k)) fail(`unknown key "${k}"`);
  const chains = g.chains.map((c: unknown, i: number) => {
    const at = `chains[${i}]`;
    const o = c as Record<string, unknown>;
    if (typeof o !== 'object' || o === null) return fail(`${at} must be an object`);
    for (const k of Object.keys(o)) if (!['name', 'vm', 'genesisData', 'genesis', 'aliases', 'subnetID'].includes(k)) fail(`${at}: unknown key "${k}"`);
    if (typeof o.name !== 'string' || o.name.length === 0 || o.name.length > 128) fail(`${at}.name must be a string of 1 to 128 characters`);
    if (typeof o.vm !== 'string') return fail(`${at}.vm must be a vmID or VM alias`);
    let vmId: Id;
    try {
      vmId = resolveVm(o.vm);
    } catch (e) {
      return fail(`${at}.vm: ${(e as Error).message}`);
    }
    let genesis: Uint8Array | { json: unknown } = new Uint8Array();
    if (o.genesis !== undefined && o.genesisData !== undefined) fail(`${at} ("${o.name}"): give "genesis" (JSON) or "genesisData" (cb58), not both`);
    if (o.genesis !== undefined) genesis = { json: o.genesis };
    if (o.genesisData !== undefined) {
      if (typeof o.genesisData !== 'string') fail(`${at}.genesisData must be a cb58 string`);
      try {
        genesis = o.genesisData === '' ? new Uint8Array() : cb58Decode(o.genesisData as string);
      } catch (e) {
        fail(`${at}.genesisData: ${(e as Error).message}`);
      }
    }
    const aliases = o.aliases ?? [];
    if (!Array.isArray(aliases) || !aliases.every((a) => typeof a === 'string')) fail(`${at}.aliases must be an array of strings`);
    let subnetId = Id.empty;
    if (o.subnetID !== undefined) {
      try {
        subnetId = Id.fromString(String(o.subnetID));
      } catch (e) {
        fail(`${at}.subnetID: ${(e as Error).message}`);
      }
    }
    return { name: o.name as string, subnetId, vmId, genesis, aliases: aliases as string[] };
  });
  const encoded: GenesisSpec['chains'] = [];
  for (const [i, c] of chains.entries()) {
    if (c.genesis instanceof Uint8Array) {
      encoded.push({ ...c, genesis: c.genesis });
      continue;
    }
    try {
      const { bytes } = await encodeJsonGenesis(c.genesis.json, findBuildGenesis(staticServices(c.vmId)));
      encoded.push({ ...c, genesis: bytes });
    } catch (e) {
      fail(`chains[${i}] ("${c.name}").genesis: ${(e as Error).message}`);
    }
  }
  const accounts = (g.accounts ?? []) as unknown[];
  if (!Array.isArray(accounts)) fail('"accounts" must be an array');
  const funded = accounts.map((a, i) => {
    const o = a as { address?: unknown; balance?: unknown };
    if (typeof o !== 'object' || o === null) return fail(`accounts[${i}] must be an object`);
    for (const k of Object.keys(o)) if (!['address', 'balance'].includes(k)) fail(`accounts[${i}]: unknown key "${k}"`);
    try {
      const balance = BigInt(String(o.balance));
      if (balance <= 0n) throw new RangeError('balance must be positive');
      return { address: ShortId.fromString(String(o.address)), balance };
    } catch (e) {
      return fail(`accounts[${i}]: ${(e as Error).message}`);
    }
  });
  if (g.validators === undefined && defaultValidators === undefined) {
    fail(`"validators" is required: ${networkLabel(networkId)} has no built-in validators`);
  }
  let validators: GenesisSpec['validators'] = [...(defaultValidators ?? [])];
  if (g.validators !== undefined) {
    if (!Array.isArray(g.validators)) fail('"validators" must be an array');
    validators = (g.validators as unknown[]).map((v, i) => {
      const o = v as { nodeID?: unknown; weight?: unknown; destination?: unknown };
      if (typeof o !== 'object' || o === null) return fail(`validators[${i}] must be an object`);
      for (const k of Object.keys(o)) if (!['nodeID', 'weight', 'destination'].includes(k)) fail(`validators[${i}]: unknown key "${k}"`);
      try {
        const weight = BigInt(String(o.weight));
        if (weight <= 0n) throw new RangeError('weight must be positive');
        const validator: Validator & { destination?: ShortId } = { nodeId: ShortId.fromString(String(o.nodeID)), weight };
        if (o.destination !== undefined) validator.destination = ShortId.fromString(String(o.destination));
        return validator;
      } catch (e) {
        return fail(`validators[${i}]: ${(e as Error).message}`);
      }
    });
  }
  return genesisOf(networkId, { chains: encoded, validators, accounts: funded });
}
