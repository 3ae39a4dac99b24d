import type { IncomingMessage, ServerResponse } from 'node:http';
import { vmIdFromName, type Id, type ShortId } from '../ids/id.js';
import type { BoundService } from '../rpc/service.js';
import type { Block } from './block.js';
import type { ChainContext } from './context.js';

export type VMState = 'bootstrapping' | 'normalOp';

/** What a VM tells the engine from `waitForEvent`. `pendingTxs`: build a block now. */
export type VMEvent = 'pendingTxs';

export interface VMInit {
  /** The chain's genesis bytes (from the genesis file or the createBlockchain transaction). */
  genesis: Uint8Array;
  /** Per-chain config bytes, if the operator gave any. */
  config?: Uint8Array;
  /** Network upgrade bytes, if any. */
  upgrade?: Uint8Array;
}

/** A raw HTTP handler (e.g. EVM /rpc and /ws); JSON-RPC services are preferred. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * One WebSocket connection as the node hands it to a VM: text messages in and out. The node does the
 * framing, the size limit of a message, the Host and Origin checks, and closes a connection whose
 * client does not read what is sent to it.
 */
export interface WebSocketConnection {
  /** Sends one text message; ignored once the connection is closed. */
  send(text: string): void;
  close(code?: number, reason?: string): void;
  /** Called for each text message the client sends (binary messages are refused by the node). */
  onMessage(listener: (text: string) => void): void;
  /** Called once, when the connection closes for any reason. */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

/** A WebSocket handler (e.g. the asset VM's pubsub, an EVM's /ws): called once per connection. */
export type WebSocketHandler = (conn: WebSocketConnection) => void;

/**
 * Handlers a chain serves. `path` '' mounts at /ext/bc/<chainID> (and every alias);
 * 'rpc' at /ext/bc/<chainID>/rpc, and so on. One kind per handler: JSON-RPC services, a raw HTTP
 * handler, or a WebSocket handler.
 */
export interface ChainHandler {
  path: string;
  services?: BoundService[];
  http?: HttpHandler;
  websocket?: WebSocketHandler;
}

/**
 * A linear-chain VM (modelled on avalanchego's ChainVM). All methods are async.
 *
 * The engine guarantees: `initialize` first and once; `setState('bootstrapping')` then
 * `setState('normalOp')` before any block is built; calls are not concurrent with `shutdown`;
 * `buildBlock` is only called after `waitForEvent` resolved 'pendingTxs'.
 * The VM guarantees: `getBlock` and `getBlockIdAtHeight` throw NotFoundError for unknown
 * blocks/heights; `lastAccepted()` and the height index agree after every accept; `buildBlock`
 * builds on the last `setPreference` block; `waitForEvent` rejects promptly when its signal aborts.
 *
 * Faults (the node contains them to the chain):
 * - Every call except `waitForEvent` has a deadline (`--vm-call-timeout`, default 30 s). A call that
 *   has not settled by then halts the chain: consensus stops, the chain's `ctx.signal` aborts,
 *   `shutdown()` is called, its API answers "chain … is halted: <reason>" and its health check is
 *   red. Late results are ignored.
 * - An uncaught exception or unhandled rejection whose stack runs through the plugin's code (its
 *   package directory or plugin file: a timer, a forgotten promise) halts the chains of this VM, not
 *   the node. Throw Errors (a stack is how the node knows whose fault it is).
 * - `buildBlock` failing (throwing, or returning a block that fails `verify` or is not new) is
 *   logged at warn and retried with exponential backoff (100 ms doubling to 30 s) on the next
 *   'pendingTxs', so `waitForEvent` may keep answering while the VM recovers. An error whose `code`
 *   is 'NothingToBuild' (the pending txs went into another node's block meanwhile) is routine on a
 *   network: logged at debug, with the same backoff.
 */
export interface ChainVM {
  initialize(ctx: ChainContext, init: VMInit): Promise<void>;
  setState(state: VMState): Promise<void>;
  /**
   * A new block on the preferred block, from pending transactions. If the block then fails
   * `verify()`, the engine drops it: neither `accept()` nor `reject()` is ever called on it, and
   * nothing else tells the VM. Its transactions stay the VM's responsibility: a VM that took them out
   * of its mempool to build should put back those still valid (e.g. when its own verify fails) so
   * they are not lost, and drop the invalid ones so the next build does not fail the same way.
   */
  buildBlock(): Promise<Block>;
  /** Parses bytes into a block (not yet verified). Throws on malformed bytes. */
  parseBlock(bytes: Uint8Array): Promise<Block>;
  /** A block this VM knows (accepted, or parsed and not yet decided); NotFoundError otherwise. */
  getBlock(id: Id): Promise<Block>;
  setPreference(id: Id): Promise<void>;
  lastAccepted(): Promise<Id>;
  /** The accepted block at `height`; NotFoundError above the last accepted height. */
  getBlockIdAtHeight(height: number): Promise<Id>;
  /** Resolves when the VM wants something from the engine; rejects when `signal` aborts. */
  waitForEvent(signal: AbortSignal): Promise<VMEvent>;
  createHandlers(): Promise<ChainHandler[]>;
  shutdown(): Promise<void>;
  /**
   * Gossip from another node's instance of this chain (what it sent with `ctx.network.gossip`,
   * e.g. a new tx). Optional. Untrusted bytes: check them as any input; errors are logged, never
   * answered.
   */
  onGossip?(from: ShortId, payload: Uint8Array): Promise<void>;
}

/** What a plugin package exports as `vmFactory`. */
export interface VMFactory {
  readonly name: string;
  readonly vmId: Id;
  /** semver of the plugin. */
  readonly version: string;
  create(): ChainVM | Promise<ChainVM>;
  /** Services that need no chain (e.g. buildGenesis), mounted at /ext/vm/<vmId> and /ext/vm/<name>. */
  staticServices?(): BoundService[];
  /**
   * Throws when `genesis` is not valid genesis data for this VM (the error's message says why, naming
   * the field): platform.createBlockchain then refuses it before building the tx, rather than the
   * chain failing to start once created. Optional; should be cheap and import nothing heavy.
   */
  checkGenesis?(genesis: Uint8Array): void | Promise<void>;
}

/** Declares a VM plugin; vmId defaults to the name zero-padded to 32 bytes. */
export function defineVM(def: {
  name: string;
  version: string;
  vmId?: Id;
  create: () => ChainVM | Promise<ChainVM>;
  staticServices?: () => BoundService[];
  checkGenesis?: (genesis: Uint8Array) => void | Promise<void>;
}): VMFactory {
  return { ...def, vmId: def.vmId ?? vmIdFromName(def.name) };
}

/** True when `x` looks like a VMFactory (what plugin loaders check). */
export function isVMFactory(x: unknown): x is VMFactory {
  const f = x as Partial<VMFactory> | null;
  return (
    typeof f === 'object' &&
    f !== null &&
    typeof f.name === 'string' &&
    typeof f.version === 'string' &&
    typeof f.create === 'function' &&
    typeof f.vmId === 'object' &&
    f.vmId !== null &&
    typeof (f.vmId as Id).toString === 'function' &&
    (f.vmId as Id).bytes?.length === 32
  );
}
