/**
 * A chain's genesis given as JSON (a genesis file's `"genesis": {...}`), made into genesis bytes:
 * through the VM's own `buildGenesis` static method when it has one (the avm's `avm.buildGenesis`,
 * called as over HTTP: params `{ genesisData: <the JSON> }`, result `{ bytes: <cb58> }`), else as
 * the UTF-8 bytes of the JSON text (`JSON.stringify`, no spaces).
 */
import { NodeError, cb58Decode, isNodeError, type BoundMethod, type BoundService } from '@cornice/sdk';
import { BUILD_GENESIS_LIMITS } from '../platform/static-service.js';

/** The most bytes a chain's genesis data may have (platform.buildGenesis's bound too). */
export const MAX_CHAIN_GENESIS_BYTES = BUILD_GENESIS_LIMITS.genesisDataBytes;

export class JsonGenesisError extends NodeError<'Invalid'> {}

/** The `<service>.buildGenesis` method of a VM's static services, if it has one. */
export function findBuildGenesis(services: readonly BoundService[]): BoundMethod | undefined {
  for (const s of services) {
    const m = s.methods.get(`${s.def.name}.buildGenesis`);
    if (m) return m;
  }
  return undefined;
}

/** How a VM's JSON genesis is encoded: what `encodeJsonGenesis` did, for logs and docs. */
export type JsonGenesisEncoding = 'buildGenesis' | 'json';

/**
 * The genesis bytes of `json`, and how they were made. Throws JsonGenesisError with the VM's own
 * message (e.g. `genesisData.asset1.name: ...`) when buildGenesis refuses the JSON, or when the
 * bytes exceed MAX_CHAIN_GENESIS_BYTES.
 */
export async function encodeJsonGenesis(json: unknown, buildGenesis: BoundMethod | undefined): Promise<{ bytes: Uint8Array; encoding: JsonGenesisEncoding }> {
  let bytes: Uint8Array;
  let encoding: JsonGenesisEncoding;
  if (buildGenesis) {
    encoding = 'buildGenesis';
    let result: unknown;
    try {
      result = await buildGenesis({ genesisData: json });
    } catch (e) {
      // By brand: the error may come from a plugin's own copy of the sdk.
      throw new JsonGenesisError('Invalid', `buildGenesis refused it: ${isNodeError(e) || e instanceof Error ? e.message : String(e)}`);
    }
    const cb58 = (result as { bytes?: unknown } | null)?.bytes;
    if (typeof cb58 !== 'string') throw new JsonGenesisError('Invalid', 'buildGenesis answered without a cb58 "bytes" string');
    try {
      bytes = cb58Decode(cb58);
    } catch (e) {
      throw new JsonGenesisError('Invalid', `buildGenesis answered bad "bytes": ${(e as Error).message}`);
    }
  } else {
    encoding = 'json';
    bytes = new TextEncoder().encode(JSON.stringify(json));
  }
  if (bytes.length > MAX_CHAIN_GENESIS_BYTES) {
    throw new JsonGenesisError('Invalid', `encodes to ${bytes.length} bytes; a chain's genesis is at most ${MAX_CHAIN_GENESIS_BYTES} bytes`);
  }
  return { bytes, encoding };
}
