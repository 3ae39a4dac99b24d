import { defineService, method, p, result } from '@cornice/sdk';
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
  peers: method({
    params: p.none(),
    result: result<{ peers: string[]; details: PeerSummary[] }>(),
    doc: 'Connected peers: `peers` as ip:port (the reference), `details` with node ID, version, direction and last sent/received times',
  }),
  alias: method({
    params: p.object({ endpoint: p.string({ min: 1, max: 512 }), alias: alias() }),
    result: result<{ success: boolean }>(),
    doc: 'Make /ext/<alias> serve what /ext/<endpoint> serves',
  }),
  aliasChain: method({
    params: p.object({ chain: p.string({ min: 1, max: 128 }), alias: p.string({ min: 1, max: 128 }) }),
    result: result<{ success: boolean }>(),
    doc: 'Give a chain another alias, usable wherever its ID is (e.g. /ext/bc/<alias>)',
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
    params: p.object({ fileName: profileFileName() }),
    result: result<{ success: boolean }>(),
    doc: 'Write a V8 heap snapshot to fileName',
  }),
  lockProfile: method({
    params: p.object({ fileName: profileFileName() }),
    result: result<{ success: boolean }>(),
    doc: 'Write the closest Node.js has to mutex statistics: event-loop delay and active handles',
  }),
  stacktrace: method({ params: p.none(), result: result<{ stacktrace: string }>(), doc: 'JavaScript and native stacks of the node process' }),
});
