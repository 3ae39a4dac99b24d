import type { Id, ShortId } from '@cornice/sdk';
import type { EngineTransport } from './types.js';

/** What LoopbackTransport delivers to (a SnowmanEngine). */
export interface LoopbackTarget {
  onPushQuery(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void>;
  /** A poll by block ID (optional: the engine handles it). */
  onPullQuery?(from: ShortId, requestId: number, blockId: Id): Promise<void>;
  /** `accepted`: the voter's last accepted block, when it said. */
  onChits(from: ShortId, requestId: number, preferred: Id, accepted?: Id): void;
  onQueryFailed(from: ShortId, requestId: number): void;
  onGet(from: ShortId, requestId: number, blockId: Id): Promise<void>;
  onPut(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void>;
  /** A block another node accepted, sent unasked (optional: the engine handles it). */
  onGossipedBlock?(from: ShortId, bytes: Uint8Array): Promise<void>;
}

/**
 * A transport that wires an engine to itself: messages to `self` come back to the engine on a later
 * turn (`defer`, setImmediate by default, so polls never starve the event loop); messages to any other
 * node are dropped (there is no network yet: the RequestSender in front never sends a query to a node
 * that is not connected, and fails it at its deadline).
 */
export class LoopbackTransport implements EngineTransport {
  #target: LoopbackTarget | undefined;

  constructor(
    readonly self: ShortId,
    private readonly defer: (fn: () => void) => void = (fn) => void setImmediate(fn),
  ) {}

  attach(target: LoopbackTarget): void {
    this.#target = target;
  }

  pushQuery(to: readonly ShortId[], requestId: number, block: Uint8Array): void {
    if (to.some((id) => id.equals(this.self))) this.defer(() => void this.#target?.onPushQuery(this.self, requestId, block));
  }

  chits(to: ShortId, requestId: number, preferred: Id, accepted?: Id): void {
    if (to.equals(this.self)) this.defer(() => this.#target?.onChits(this.self, requestId, preferred, accepted));
  }

  get(to: ShortId, requestId: number, blockId: Id): void {
    if (to.equals(this.self)) this.defer(() => void this.#target?.onGet(this.self, requestId, blockId));
  }

  put(to: ShortId, requestId: number, block: Uint8Array): void {
    if (to.equals(this.self)) this.defer(() => void this.#target?.onPut(this.self, requestId, block));
  }
}
