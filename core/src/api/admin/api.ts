import { defineService, method, p, result } from '@cornice/sdk';
import { HEAP_SAMPLING_MAX_MS, HEAP_SAMPLING_MIN_MS } from './heap-profile.js';
import type { PeerSummary } from '../../network/types.js';

/** A file name inside the node's profile directory: no directories, no traversal. */
export const profileFileName = () =>
  p.string({
    min: 1,
    max: 255,
    pattern: /^(?!\.{1,2}$)[A-Za-z0-9._-]+$/,
    patternDescription: "a plain file name (letters, digits, '.', '_', '-'), written inside the node's profile directory",
  });

const alias = () => p.string({ min: 1, max: 512 });

/** admin: node identity, aliases and profiling. Served at /ext/admin. */
export const adminApi = defineService('admin', {
  getNodeID: method({ params: p.none(), result: result<{ nodeID: string }>(), doc: "This node's ID, derived from its staking certificate" }),
  getNetworkID: method({ params: p.none(), result: result<{ networkID: string }>(), doc: 'The network ID, as a decimal string' }),
  getNetworkName: method({ params: p.none(), result: result<{ networkName: string }>(), doc: 'The network name: `local` for 12345, `mainnet`, `denali`…, `network-<id>` otherwise' }),
  getNodeVersion: method({ params: p.none(), result: result<{ version: string }>(), doc: "The node's version string, `cornice/<package version>`" }),
  peers: method({
    params: p.none(),
    result: result<{ peers: string[]; details: PeerSummary[] }>(),
    doc: 'Connected peers: `peers` as ip:port (the reference), `details` with node ID, version, direction and last sent/received times',
  }),
  alias: method({
    params: p.object({ endpoint: p.string({ min: 1, max: 512 }), alias: alias() }),
    result: result<{ success: boolean }>(),
    doc: 'Make /ext/<alias> serve what /ext/<endpoint> serves; never over a path already served, nor under bc/ or vm/; bounded in number',
  }),
  removeAlias: method({
    params: p.object({ alias: alias() }),
    result: result<{ success: boolean }>(),
    doc: 'Remove an alias that admin.alias added',
  }),
  aliasChain: method({
    params: p.object({ chain: p.string({ min: 1, max: 128 }), alias: p.string({ min: 1, max: 128 }) }),
    result: result<{ success: boolean }>(),
    doc: 'Give a chain another alias, usable wherever its ID is (e.g. /ext/bc/<alias>); bounded in number',
  }),
  removeChainAlias: method({
    params: p.object({ alias: p.string({ min: 1, max: 128 }) }),
    result: result<{ success: boolean }>(),
    doc: 'Remove a chain alias that admin.aliasChain added',
  }),
  getBlockchainID: method({
    params: p.object({ alias: p.string({ min: 1, max: 128 }) }),
    result: result<{ blockchainID: string }>(),
    doc: 'The chain ID behind an alias',
  }),
  getChainAliases: method({
    params: p.object({ chainID: p.id() }),
    result: result<{ Aliases: string[] }>(),
    doc: "A chain's aliases (reply key capitalised, as the reference)",
  }),
  startCPUProfiler: method({
    params: p.object({ fileName: profileFileName() }),
    result: result<{ success: boolean }>(),
    doc: 'Start a V8 CPU profile, written to fileName when stopped',
  }),
  stopCPUProfiler: method({ params: p.none(), result: result<{ success: boolean }>(), doc: 'Stop the CPU profile and write it' }),
  memoryProfile: method({
    params: p.object({
      fileName: profileFileName(),
      durationMs: p.optional(p.uint(32, { min: HEAP_SAMPLING_MIN_MS, max: HEAP_SAMPLING_MAX_MS })),
      kind: p.optional(p.oneOf('sampling', 'snapshot')),
    }),
    result: result<{ success: boolean }>(),
    doc: 'Write a sampling heap profile over durationMs (default 5000) to fileName; kind "snapshot" (only with --profile-heap-snapshot-enabled) writes a full heap snapshot instead. One at a time',
  }),
  lockProfile: method({
    params: p.object({ fileName: profileFileName() }),
    result: result<{ success: boolean }>(),
    doc: 'Write the closest Node.js has to mutex statistics: event-loop delay and active handles',
  }),
  stacktrace: method({ params: p.none(), result: result<{ stacktrace: string }>(), doc: 'JavaScript and native stacks of the node process' }),
});
