/** The shapes of the payloads that cross between host.ts and worker-main.ts (see protocol.ts). */
import type { LogLevel } from '@cornice/sdk';
import type { WireError } from './protocol.js';

/** A block as the host sees it; verify/accept/reject go back by ID. */
export interface BlockWire {
  id: Uint8Array;
  parentId: Uint8Array;
  height: number;
  timestamp: number;
  bytes: Uint8Array;
}

/**
 * What became of a verify the worker ran right after building (engine-view.ts): passed, failed (the
 * VM's error), or still running when buildBlock answered (its outcome follows as a `verified` event).
 */
export type VerifyOutcome = { ok: true } | { ok: false; error: WireError } | 'pending';

/** buildBlock's answer: the block, and the outcome of its verify when the worker ran it. */
export interface BuiltWire extends BlockWire {
  verified?: VerifyOutcome;
}

/** The plain parts of a ChainContext; the worker rebuilds IDs from the bytes. */
export interface ContextWire {
  networkId: number;
  subnetId: Uint8Array;
  chainId: Uint8Array;
  aliases: string[];
  nodeId: Uint8Array;
  vmId: Uint8Array;
  nativeAssetId: Uint8Array | undefined;
  nativeSymbol: string;
  debugApis: boolean;
  /** The levels the chain's logger writes: the worker drops the others without crossing. */
  logLevels: Array<Exclude<LogLevel, 'off'>>;
}

/** Shared-memory ops joined to a batch: peer chain ID, values to put, keys to remove. */
export type SharedOps = [peer: Uint8Array, put: Array<[Uint8Array, Uint8Array]>, remove: Uint8Array[]];

/** A handler the VM serves: its path and kind (service method names for JSON-RPC). */
export interface HandlerWire {
  path: string;
  services: Array<{ name: string; methods: string[] }> | undefined;
  http: boolean;
  websocket: boolean;
}

export interface HttpRequestWire {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  remoteAddress: string | undefined;
  body: Uint8Array;
}

export interface HttpResponseWire {
  status: number;
  headers: Record<string, string | string[]>;
  body: Uint8Array;
  /** The handler destroyed the response instead of ending it: the host drops the connection. */
  destroyed: boolean;
}
