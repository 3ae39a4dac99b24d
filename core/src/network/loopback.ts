/**
 * The node's engines wired to the node itself (until the network layer brings TCP peers): each
 * chain gets a LoopbackTransport; the only connected node is this one. Queries to other validators
 * are never sent (the chain's RequestSender fails them at their deadline).
 */
import type { Id, ShortId } from '@cornice/sdk';
import { LoopbackTransport, type EngineTransport, type LoopbackTarget } from '../consensus/index.js';

/** What the chain manager needs from a network: transports per chain and who is connected. */
export interface EngineNetwork {
  /** Nodes reachable now, this one included. */
  connected(): readonly ShortId[];
  isConnected(node: ShortId): boolean;
  /** A transport for one chain's engine; `attach` hands it the engine to deliver to. */
  open(chainId: Id): { transport: EngineTransport; attach(target: LoopbackTarget): void };
}

export function loopbackNetwork(self: ShortId): EngineNetwork {
  return {
    connected: () => [self],
    isConnected: (node) => node.equals(self),
    open() {
      const transport = new LoopbackTransport(self);
      return { transport, attach: (target) => transport.attach(target) };
    },
  };
}
