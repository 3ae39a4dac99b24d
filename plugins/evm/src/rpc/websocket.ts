/**
 * WebSocket `/ws`: the same JSON-RPC methods over text messages, plus eth_subscribe/eth_unsubscribe
 * (newHeads, logs, newPendingTransactions, and coreth's newAcceptedTransactions) with geth's
 * notification format. Subscriptions end with the connection and are bounded per connection; so are
 * the requests in flight. Notifications are sent as they happen, never queued here: the node closes
 * a client that does not read.
 */
import type { Logger, WebSocketHandler } from '@cornice/sdk';
import { EvmRpcError, type AcceptedBlock, type TxView } from '../backend.js';
import { logMatches, parseFilterCriteria, type FilterCriteria } from './args.js';
import { optional, parseArgs, required, RpcCode, type Arg, type MethodSpec, type RpcDispatcher } from './dispatch.js';
import type { ChainEvents } from './events.js';
import { newId } from './filters.js';
import { headerJson, logJson, txJson } from './format.js';
import { hexData, parseBool, parseString } from './hex.js';

export interface WebSocketLimits {
  /** Subscriptions one connection may hold. */
  readonly maxSubscriptions: number;
  /** Messages of one connection being handled at once; a client that sends more is disconnected. */
  readonly maxInFlight: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = { maxSubscriptions: 256, maxInFlight: 256 };

/** Close code for a client breaking a limit (RFC 6455 policy violation). */
const POLICY_VIOLATION = 1008;
/** Subscription kinds and their arguments (the name is argument 0). */
const NAME = required((v) => v);
const SUBSCRIPTION_ARGS: ReadonlyMap<string, readonly Arg[]> = new Map([
  ['newHeads', [NAME]],
  ['logs', [NAME, optional(parseFilterCriteria)]],
  ['newPendingTransactions', [NAME, optional(parseBool)]],
  // coreth's: the transactions of each accepted block.
  ['newAcceptedTransactions', [NAME, optional(parseBool)]],
]);

/** Notifications of a subscription created in a message whose reply is not sent yet (bounded). */
const MAX_EARLY = 1_000;

/** The newHeads payload of the last block, shared by every subscriber. */
class HeaderCache {
  #block: AcceptedBlock | undefined;
  #json = '';
  of(b: AcceptedBlock): string {
    if (b !== this.#block) {
      this.#block = b;
      this.#json = JSON.stringify(headerJson(b.block.header));
    }
    return this.#json;
  }
}

interface Subscription {
  stop: () => void;
  /** False until the reply that announced it was sent; notifications wait in `early` until then. */
  live: boolean;
  early: string[];
}

export function createWebSocketHandler(
  dispatcher: RpcDispatcher,
  events: ChainEvents,
  limits: WebSocketLimits,
  log: Logger,
  /** Methods a connection holds for itself (personal.ts: its own unlocks), closed with it. */
  perConnection?: () => { readonly methods: ReadonlyMap<string, MethodSpec>; close(): void },
): WebSocketHandler & { closeAll(): void } {
  const headers = new HeaderCache();
  const open = new Set<() => void>();

  const handler: WebSocketHandler = (conn) => {
    const subs = new Map<string, Subscription>();
    let inFlight = 0;
    /** Subscriptions made by the message being dispatched (its methods run synchronously up to their first await). */
    let creating: Subscription[] | undefined;

    const notify = (sub: Subscription, id: string, resultJson: string): void => {
      const text = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"' + id + '","result":' + resultJson + '}}';
      if (sub.live) conn.send(text);
      else if (sub.early.length < MAX_EARLY) sub.early.push(text);
    };

    const subscribe = (params: readonly unknown[]): string => {
      const kind = params[0];
      if (typeof kind !== 'string') throw new EvmRpcError(-32602, 'expected subscription name as first argument');
      const specs = SUBSCRIPTION_ARGS.get(kind);
      if (!specs) throw new EvmRpcError(-32601, `no ${JSON.stringify(kind.slice(0, 64))} subscription in eth namespace`);
      // As geth, the name is argument 0: "invalid argument 1: ..." names the first option.
      const args = parseArgs(specs, params);
      if (subs.size >= limits.maxSubscriptions) {
        throw new EvmRpcError(-32000, `too many subscriptions on this connection (at most ${limits.maxSubscriptions})`);
      }
      const id = newId();
      const sub: Subscription = { stop: () => {}, live: creating === undefined, early: [] };
      const full = args[1] === true;
      if (kind === 'newHeads') {
        sub.stop = events.onBlock((b) => notify(sub, id, headers.of(b)));
      } else if (kind === 'logs') {
        const crit = (args[1] as FilterCriteria | undefined) ?? { addresses: [], topics: [] };
        sub.stop = events.onBlock(({ receipts }) => {
          for (const r of receipts) for (const l of r.logs) if (logMatches(l, crit)) notify(sub, id, JSON.stringify(logJson(l)));
        });
      } else if (kind === 'newPendingTransactions') {
        sub.stop = events.onPending((t: TxView) => notify(sub, id, full ? JSON.stringify(txJson(t)) : '"' + hexData(t.hash) + '"'));
      } else {
        sub.stop = events.onBlock(({ block }) => {
          const { hash, number } = block.header;
          block.transactions.forEach((t, i) => notify(sub, id, full ? JSON.stringify(txJson(t, hash, number, i)) : '"' + hexData(t.hash) + '"'));
        });
      }
      subs.set(id, sub);
      creating?.push(sub);
      return id;
    };

    const unsubscribe = (id: string): boolean => {
      const sub = subs.get(id);
      if (!sub) return false;
      sub.stop();
      subs.delete(id);
      return true;
    };

    const own = perConnection?.();
    const local = new Map<string, MethodSpec>([
      ...(own?.methods ?? []),
      ['eth_subscribe', { run: subscribe }],
      ['eth_unsubscribe', { args: [required((v) => parseString(v, 128))], run: (a) => unsubscribe(a[0] as string) }],
    ]);

    const endAll = (): void => {
      own?.close();
      for (const sub of subs.values()) sub.stop();
      subs.clear();
      open.delete(closeConn);
    };
    const closeConn = (): void => {
      endAll();
      conn.close(1001, 'going away');
    };
    open.add(closeConn);
    conn.onClose(endAll);

    conn.onMessage((text) => {
      if (inFlight >= limits.maxInFlight) {
        conn.close(POLICY_VIOLATION, `more than ${limits.maxInFlight} requests in flight`);
        return;
      }
      inFlight++;
      creating = [];
      const replied = dispatcher.handle(text, local);
      const created = creating;
      creating = undefined;
      replied.then(
        (reply) => {
          inFlight--;
          if (reply !== undefined) conn.send(reply);
          // Subscriptions made by this message start after the reply that named them.
          for (const sub of created) {
            sub.live = true;
            for (const n of sub.early.splice(0)) conn.send(n);
          }
        },
        (e: unknown) => {
          inFlight--;
          log.error('eth websocket message failed', { error: e });
          conn.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RpcCode.Internal, message: 'internal error' } }));
        },
      );
    });
  };

  return Object.assign(handler, {
    /** Closes every connection (front end shutdown). */
    closeAll(): void {
      for (const close of [...open]) close();
    },
  });
}
