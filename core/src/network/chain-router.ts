/**
 * Each chain's link to the other nodes (`open(chainId)` → a ChainLink) and the delivery of peers'
 * messages to the chain they name: its engine (queries, chits, Get/Put), its bootstrapper (frontiers,
 * accepted sets, ancestors) or its VM (gossip). Messages to this node itself come back on a later
 * turn, as with the loopback; messages for a chain this node does not run are ignored.
 *
 * `route` returns what the receiver returned (a promise for the handlers that work asynchronously),
 * so that the Network can meter how long a peer's request keeps the node busy (request-budget.ts).
 */
import type { Id, Logger, ShortId } from '@cornice/sdk';
import type { BootstrapTarget, BootstrapTransport } from '../consensus/bootstrap/types.js';
import type { EngineTransport, LoopbackTarget } from '../consensus/index.js';
import type { ChainMessage, Message } from './messages.js';
import type { ChainLink } from './types.js';

/** A Put under this request ID is an accepted block sent unasked (the reference's GossipMsgRequestID); engines never use it. */
export const GOSSIP_REQUEST_ID = 0xffff_ffff;

/** What the router needs of the network: who this node is and how to reach a peer. */
export interface RouterHost {
  readonly self: ShortId;
  /** Sends to a connected peer (nothing when not connected). */
  send(to: ShortId, m: Message): void;
  /** Sends to every connected peer. */
  broadcast(m: Message): void;
  readonly log: Logger;
}

/** A chain's receivers. */
interface ChainTargets {
  engine: LoopbackTarget | undefined;
  bootstrap: BootstrapTarget | undefined;
  gossip: ((from: ShortId, payload: Uint8Array) => void) | undefined;
}

export class ChainRouter {
  readonly #host: RouterHost;
  readonly #chains = new Map<string, ChainTargets>();

  constructor(host: RouterHost) {
    this.#host = host;
  }

  open(chainId: Id): ChainLink {
    const targets: ChainTargets = { engine: undefined, bootstrap: undefined, gossip: undefined };
    this.#chains.set(chainId.key, targets);
    const host = this.#host;
    const self = host.self;
    const later = (fn: () => void) => void setImmediate(fn);
    /** Sends to each node in `to`; delivers to this node on a later turn. */
    const each = (to: readonly ShortId[], toSelf: () => void, m: () => Message) => {
      let msg: Message | undefined;
      for (const node of to) {
        if (node.equals(self)) later(toSelf);
        else host.send(node, (msg ??= m()));
      }
    };
    const transport: EngineTransport = {
      pushQuery: (to, requestId, block) =>
        each(to, () => void targets.engine?.onPushQuery(self, requestId, block), () => ({ op: 'PushQuery', chainId, requestId, container: block })),
      pullQuery: (to, requestId, blockId) =>
        each(to, () => void targets.engine?.onPullQuery?.(self, requestId, blockId), () => ({ op: 'PullQuery', chainId, requestId, containerId: blockId })),
      // The voter's last accepted block rides second (the reference sends one ID; a second is ignored there).
      chits: (to, requestId, preferred, accepted) =>
        each(
          [to],
          () => targets.engine?.onChits(self, requestId, preferred, accepted),
          () => ({ op: 'Chits', chainId, requestId, containerIds: accepted ? [preferred, accepted] : [preferred] }),
        ),
      get: (to, requestId, blockId) =>
        each([to], () => void targets.engine?.onGet(self, requestId, blockId), () => ({ op: 'Get', chainId, requestId, containerId: blockId })),
      put: (to, requestId, block) => each([to], () => void targets.engine?.onPut(self, requestId, block), () => ({ op: 'Put', chainId, requestId, container: block })),
    };
    const bootstrap: BootstrapTransport = {
      getAcceptedFrontier: (to, requestId) =>
        each(to, () => void targets.bootstrap?.onGetAcceptedFrontier(self, requestId), () => ({ op: 'GetAcceptedFrontier', chainId, requestId })),
      getAccepted: (to, requestId, ids) =>
        each(to, () => void targets.bootstrap?.onGetAccepted(self, requestId, ids), () => ({ op: 'GetAccepted', chainId, requestId, containerIds: [...ids] })),
      getAncestors: (to, requestId, blockId) =>
        each([to], () => void targets.bootstrap?.onGetAncestors(self, requestId, blockId), () => ({ op: 'GetAncestors', chainId, requestId, containerId: blockId })),
      acceptedFrontier: (to, requestId, ids) =>
        each([to], () => targets.bootstrap?.onAcceptedFrontier(self, requestId, ids), () => ({ op: 'AcceptedFrontier', chainId, requestId, containerIds: [...ids] })),
      accepted: (to, requestId, ids) =>
        each([to], () => targets.bootstrap?.onAccepted(self, requestId, ids), () => ({ op: 'Accepted', chainId, requestId, containerIds: [...ids] })),
      ancestors: (to, requestId, blocks) =>
        each([to], () => targets.bootstrap?.onAncestors(self, requestId, blocks), () => ({ op: 'Ancestors', chainId, requestId, containers: [...blocks] })),
    };
    return {
      transport,
      attach: (target) => (targets.engine = target),
      bootstrap,
      attachBootstrap: (target) => (targets.bootstrap = target),
      gossipAccepted: (to, block) => {
        let m: Message | undefined;
        for (const node of to) if (!node.equals(self)) host.send(node, (m ??= { op: 'Put', chainId, requestId: GOSSIP_REQUEST_ID, container: block }));
      },
      gossip: (payload) => host.broadcast({ op: 'Gossip', chainId, payload }),
      attachGossip: (receive) => (targets.gossip = receive),
      close: () => {
        if (this.#chains.get(chainId.key) === targets) this.#chains.delete(chainId.key);
      },
    };
  }

  /** Whether this node runs the chain `chainId` names (a message for another is ignored). */
  runs(chainId: Id): boolean {
    return this.#chains.has(chainId.key);
  }

  /** Delivers a chain's message to its engine, bootstrapper or VM; what the receiver returned. */
  route(from: ShortId, m: ChainMessage): Promise<void> | void {
    const t = this.#chains.get(m.chainId.key);
    if (!t) {
      this.#host.log.debug('message for a chain this node does not run', { op: m.op, chainId: m.chainId.toString() });
      return;
    }
    switch (m.op) {
      case 'PushQuery':
        return t.engine?.onPushQuery(from, m.requestId, m.container);
      case 'PullQuery':
        return t.engine?.onPullQuery?.(from, m.requestId, m.containerId);
      case 'Chits':
        if (m.containerIds.length >= 1) t.engine?.onChits(from, m.requestId, m.containerIds[0]!, m.containerIds[1]);
        return;
      case 'Get':
        return t.engine?.onGet(from, m.requestId, m.containerId);
      case 'Put':
        if (m.requestId === GOSSIP_REQUEST_ID) return t.engine?.onGossipedBlock?.(from, m.container);
        return t.engine?.onPut(from, m.requestId, m.container);
      case 'GetAcceptedFrontier':
        return t.bootstrap?.onGetAcceptedFrontier(from, m.requestId);
      case 'AcceptedFrontier':
        t.bootstrap?.onAcceptedFrontier(from, m.requestId, m.containerIds);
        return;
      case 'GetAccepted':
        return t.bootstrap?.onGetAccepted(from, m.requestId, m.containerIds);
      case 'Accepted':
        t.bootstrap?.onAccepted(from, m.requestId, m.containerIds);
        return;
      case 'GetAncestors':
        return t.bootstrap?.onGetAncestors(from, m.requestId, m.containerId);
      case 'Ancestors':
        t.bootstrap?.onAncestors(from, m.requestId, m.containers);
        return;
      case 'Gossip':
        t.gossip?.(from, m.payload);
        return;
    }
  }
}
