/**
 * A node's engines wired to the node itself only (the test kit's in-process nodes, and nodes run with
 * networking off): each chain's engine messages to this node come back on a later turn; messages to
 * other nodes are never sent (the chain's RequestSender fails them at their deadline); there are no
 * beacons to bootstrap from and no one to gossip to.
 */
import type { Id, ShortId } from '@cornice/sdk';
import { LoopbackTransport } from '../consensus/index.js';
import type { BootstrapTransport } from '../consensus/bootstrap/types.js';
import type { ChainLink, EngineNetwork } from './types.js';

export type { ChainLink, EngineNetwork } from './types.js';

const nowhere: BootstrapTransport = {
  getAcceptedFrontier() {},
  getAccepted() {},
  getAncestors() {},
  acceptedFrontier() {},
  accepted() {},
  ancestors() {},
};

export function loopbackNetwork(self: ShortId): EngineNetwork {
  return {
    connected: () => [self],
    isConnected: (node) => node.equals(self),
    open(_chainId: Id): ChainLink {
      const transport = new LoopbackTransport(self);
      return {
        transport,
        attach: (target) => transport.attach(target),
        bootstrap: nowhere,
        attachBootstrap() {},
        gossipAccepted() {},
        gossip() {},
        attachGossip() {},
        close() {},
      };
    },
  };
}
