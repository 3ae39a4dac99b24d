/**
 * The Ethereum JSON-RPC front end of an EVM chain: `/rpc` (HTTP POST, single calls and batches) and
 * `/ws` (the same methods plus eth_subscribe / eth_unsubscribe), over an `EvmBackend`.
 * (Contract only for now: the implementation lands with the RPC layer.)
 */
import type { Clock, HttpHandler, KeyValueStore, Logger, WebSocketHandler } from '@cornice/sdk';
import type { EvmBackend } from '../backend.js';

/** A JSON-RPC method: params as the client sent them (an array); the JSON result. Throws EvmRpcError. */
export type EthMethod = (params: readonly unknown[]) => Promise<unknown>;

export interface EthRpcOptions {
  /** web3_clientVersion, e.g. "cornice-evm/0.1.0". */
  clientVersion: string;
  /** Where personal_ accounts are kept, encrypted with their passwords (a prefix of the chain's store). */
  accounts: KeyValueStore;
  log: Logger;
  /** Filter expiry and unlock durations. */
  clock: Clock;
  /**
   * Methods added by an extension (e.g. the subnet-EVM's eth_feeConfig); their names must be in the
   * eth_, net_, web3_ or personal_ namespaces; they may not replace a built-in method.
   */
  extraMethods?: ReadonlyMap<string, EthMethod>;
}

export interface EthRpc {
  http: HttpHandler;
  websocket: WebSocketHandler;
  /** Ends subscriptions and filters (chain shutdown). */
  close(): void;
}

export function createEthRpc(_backend: EvmBackend, _options: EthRpcOptions): EthRpc {
  throw new Error('the Ethereum JSON-RPC front end is not built yet');
}
