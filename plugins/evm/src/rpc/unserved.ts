/**
 * Methods of the Ethereum execution-apis that this chain does not serve, each answering -32601 with
 * its reason rather than geth's bare "does not exist" (API.md lists them; the execution-apis e2e test
 * holds the node to exactly this list).
 */
import { EvmRpcError } from '../evm-backend.js';
import type { MethodSpec } from './dispatch.js';

export const UNSERVED: ReadonlyMap<string, string> = new Map([
  [
    'eth_config',
    "it describes an Ethereum fork schedule by fork ID and blob schedule (EIP-7910); this chain's upgrades are the network's, with no fork IDs, and coreth does not serve it either",
  ],
]);

export function unservedMethods(): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  for (const [name, reason] of UNSERVED) {
    m.set(name, {
      run: () => {
        throw new EvmRpcError(-32601, `the method ${name} is not available: ${reason}`);
      },
    });
  }
  return m;
}
