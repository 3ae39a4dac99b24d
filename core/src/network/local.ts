/**
 * The engine transport wired to the node itself: messages to this node are delivered to its own
 * engines on a later turn of the event loop; messages to any other node fail at once (there are no
 * peers until the network layer replaces this with TCP). The engine does not know the difference.
 */
import type { Id, ShortId } from '@cornice/sdk';
import type { EngineTransport, SnowmanEngine } from '../consensus/index.js';

export class LocalNetwork {
  readonly #engines = new Map<string, SnowmanEngine>();

  constructor(readonly self: ShortId) {}

  /** Nodes reachable now: only this one. */
  connected(): ShortId[] {
    return [this.self];
  }

  attach(chainId: Id, engine: SnowmanEngine): void {
    this.#engines.set(chainId.key, engine);
  }

  detach(chainId: Id): void {
    this.#engines.delete(chainId.key);
  }

  transport(chainId: Id): EngineTransport {
    const self = this.self;
    const deliver = (to: ShortId, fn: (e: SnowmanEngine) => unknown, onFail?: () => void) => {
      setImmediate(() => {
        const engine = to.equals(self) ? this.#engines.get(chainId.key) : undefined;
        if (engine) void fn(engine);
        else onFail?.();
      });
    };
    return {
      pushQuery: (to, requestId, block) => {
        for (const node of to) {
          deliver(
            node,
            (e) => e.onPushQuery(self, requestId, block),
            () => this.#engines.get(chainId.key)?.onQueryFailed(node, requestId),
          );
        }
      },
      chits: (to, requestId, preferred) => deliver(to, (e) => e.onChits(self, requestId, preferred)),
      get: (to, requestId, blockId) => deliver(to, (e) => e.onGet(self, requestId, blockId)),
      put: (to, requestId, block) => deliver(to, (e) => e.onPut(self, requestId, block)),
    };
  }
}
