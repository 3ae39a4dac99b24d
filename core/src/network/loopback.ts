/**
 * The node's engines wired to the node itself (until the network layer brings TCP peers): each
 * chain's engine gets a LoopbackTransport; the only connected node is this one.
 */
import type { Id, ShortId } from '@cornice/sdk';
import { LoopbackTransport, type EngineTransport, type SnowmanEngine } from '../consensus/index.js';

/** What the chain manager needs from a network: transports per chain and who is connected. */
export interface EngineNetwork {
  /** Nodes reachable now, this one included. */
  connected(): readonly ShortId[];
  /** A transport for one chain's engine; `attach` hands it the engine to deliver to. */
  open(chainId: Id): { transport: EngineTransport; attach(engine: SnowmanEngine): void };
}

export function loopbackNetwork(self: ShortId): EngineNetwork {
  return {
    connected: () => [self],
    open() {
      const transport = new LoopbackTransport(self);
      return { transport, attach: (engine) => transport.attach(engine) };
    },
  };
}
