/**
 * The Ethereum JSON-RPC front end of an EVM chain: `/rpc` (HTTP POST, single calls and batches) and
 * `/ws` (the same methods plus eth_subscribe / eth_unsubscribe), over an `EvmBackend`.
 * Methods are in the web3_, net_, eth_, personal_, txpool_, debug_ and trace_ namespaces only (API.md lists them).
 */
import { NodeError, type Clock, type HttpHandler, type KeyValueStore, type Logger, type WebSocketHandler } from '@cornice/sdk';
import { EvmRpcError, type EvmBackend } from '../evm-backend.js';
import { AccountStore, DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from './accounts.js';
import { DEFAULT_DISPATCH_LIMITS, RpcDispatcher, type DispatchLimits, type MethodSpec } from './dispatch.js';
import { debugMethods, DEFAULT_TRACE_LIMITS, type TraceLimits } from './debug.js';
import { ethMethods } from './eth.js';
import { ChainEvents } from './events.js';
import { DEFAULT_FILTER_LIMITS, FilterRegistry, filterMethods, type FilterLimits } from './filters.js';
import { createHttpHandler, DEFAULT_HTTP_LIMITS, type HttpLimits } from './http.js';
import { DEFAULT_LANES_LIMITS, Lane, type LanesLimits } from './lanes.js';
import { Notifier } from './notifier.js';
import { DEFAULT_NOTIFY_LIMITS, Outboxes, type NotifyLimits } from './outbox.js';
import { personalMethods, type PersonalOptions } from './personal.js';
import { proofMethods } from './proof.js';
import { simulateMethods } from './simulate.js';
import { txMethods } from './tx-methods.js';
import { txpoolMethods } from './txpool.js';
import { unservedMethods } from './unserved.js';
import { createWebSocketHandler, DEFAULT_WEBSOCKET_LIMITS, type WebSocketLimits } from './websocket.js';

/** A JSON-RPC method: params as the client sent them (an array); the JSON result. Throws EvmRpcError. */
export type EthMethod = (params: readonly unknown[]) => Promise<unknown>;

/** Every bound of the front end (defaults: geth's where it has one; see API.md). */
export type EthRpcLimits = DispatchLimits &
  HttpLimits &
  FilterLimits &
  WebSocketLimits &
  LanesLimits &
  NotifyLimits &
  TraceLimits & { readonly accounts: AccountLimits };

export const DEFAULT_ETH_RPC_LIMITS: EthRpcLimits = {
  ...DEFAULT_DISPATCH_LIMITS,
  ...DEFAULT_HTTP_LIMITS,
  ...DEFAULT_FILTER_LIMITS,
  ...DEFAULT_WEBSOCKET_LIMITS,
  ...DEFAULT_LANES_LIMITS,
  ...DEFAULT_NOTIFY_LIMITS,
  ...DEFAULT_TRACE_LIMITS,
  accounts: DEFAULT_ACCOUNT_LIMITS,
};

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
   * eth_, net_, web3_, personal_ or txpool_ namespaces; they may not replace a built-in method.
   */
  extraMethods?: ReadonlyMap<string, EthMethod>;
  /** Overrides of the default bounds (tests, operators). */
  limits?: Partial<EthRpcLimits>;
  /** personal_ and node-held accounts: off unless `enabled`; HTTP unlocks only with `allowInsecureUnlock` (personal.ts). */
  personal?: Partial<PersonalOptions>;
  /** debug_trace* and debug_getRaw*: off unless true (off: -32601 naming the chain config key; rpc/debug.ts). */
  debugApi?: boolean;
}

export interface EthRpc {
  http: HttpHandler;
  websocket: WebSocketHandler;
  /** Ends subscriptions and filters (chain shutdown). */
  close(): void;
  /** The lanes of eth_call and of block scans (tests, metrics). */
  readonly lanes: { readonly call: Lane; readonly scan: Lane; readonly trace: Lane };
  readonly notifier: Notifier;
}

/** A misconfigured front end (an extension method with a refused name). */
export class EthRpcConfigError extends NodeError<'EthRpcConfig'> {
  constructor(message: string) {
    super('EthRpcConfig', message);
  }
}

const NAMESPACED = /^(eth|net|web3|personal|txpool|debug|trace)_[A-Za-z0-9_]{1,64}$/;

function notificationsUnsupported(): never {
  throw new EvmRpcError(-32601, 'notifications not supported');
}

export function createEthRpc(backend: EvmBackend, options: EthRpcOptions): EthRpc {
  const limits: EthRpcLimits = { ...DEFAULT_ETH_RPC_LIMITS, ...options.limits };
  const log = options.log.child({ module: 'eth-rpc' });
  const accounts = new AccountStore(options.accounts, options.clock, limits.accounts);
  const events = new ChainEvents(backend, log);
  const lanes = { call: new Lane('eth_call', limits.callLane), scan: new Lane('log, fee history and proof', limits.scanLane) };
  const filters = new FilterRegistry(backend, events, options.clock, limits, log, lanes.scan);
  const notifier = new Notifier(events, new Outboxes(limits, log));
  const personalOn = options.personal?.enabled ?? false;
  const personal = personalMethods(backend, accounts, limits.accounts.maxSeconds, { enabled: personalOn, allowInsecureUnlock: options.personal?.allowInsecureUnlock ?? false });
  const nodeAccounts = async () => (personalOn ? accounts.list() : []);
  const debug = debugMethods(backend, { enabled: options.debugApi ?? false, limits });
  const methods = new Map<string, MethodSpec>([
    ...ethMethods(backend, { clientVersion: options.clientVersion, accounts: nodeAccounts, lanes }),
    ...txMethods(backend, lanes.call),
    ...txpoolMethods(backend, nodeAccounts),
    ...filterMethods(filters),
    ...proofMethods(backend, lanes.scan),
    ...simulateMethods(backend, lanes.call),
    ...unservedMethods(),
    ...debug.methods,
    ...personal.methods,
    // Over WebSocket these are the connection's own; over HTTP they answer as geth does.
    ['eth_subscribe', { run: notificationsUnsupported }],
    ['eth_unsubscribe', { run: notificationsUnsupported }],
  ]);
  for (const [name, fn] of options.extraMethods ?? []) {
    let refused: string | undefined;
    if (!NAMESPACED.test(name)) refused = 'is not in the eth_, net_, web3_, personal_, txpool_, debug_ or trace_ namespace';
    else if (methods.has(name)) refused = 'would replace a built-in method';
    if (refused !== undefined) {
      events.close();
      throw new EthRpcConfigError(`extension method ${JSON.stringify(name.slice(0, 80))} ${refused}`);
    }
    // Promise.resolve adopts any thenable an extension returns.
    methods.set(name, { run: (params) => Promise.resolve(fn(params)) });
  }
  const dispatcher = new RpcDispatcher(methods, limits, log);
  const websocket = createWebSocketHandler(dispatcher, notifier, limits, log, personal.connection);
  return {
    http: createHttpHandler(dispatcher, limits, log),
    websocket,
    lanes: { ...lanes, trace: debug.lane },
    notifier,
    close() {
      websocket.closeAll();
      notifier.close();
      filters.close();
      events.close();
      accounts.close();
    },
  };
}
