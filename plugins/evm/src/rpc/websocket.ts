/**
 * WebSocket `/ws`: the same JSON-RPC methods over text messages, plus eth_subscribe/eth_unsubscribe
 * (newHeads, logs, newPendingTransactions, and coreth's newAcceptedTransactions) with geth's
 * notification format. Subscriptions end with the connection and are bounded per connection; so are
 * the requests in flight. Notifications are made once and shared (notifier.ts) and go through the
 * connection's outbox (outbox.ts: written at a bounded pace; a connection that falls too far behind
 * is closed with "subscription queue overflow"). Each connection is its own client for the lanes
 * and for filter quotas, and the work of its requests stops when it closes.
 */
import type { Logger, WebSocketHandler } from '@cornice/sdk';
import { EvmRpcError } from '../evm-backend.js';
import { parseFilterCriteria, type FilterCriteria } from './args.js';
import { BatchReply, optional, parseArgs, required, RpcCode, type Arg, type MethodSpec, type RpcDispatcher } from './dispatch.js';
import { newId } from './filters.js';
import { parseBool, parseString } from './hex.js';
import { criteriaKey, type Notifier, type Subscriber } from './notifier.js';
import { Outbox } from './outbox.js';
import { Cancel } from './request.js';

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

interface Subscription extends Subscriber {
  stop: () => void;
  /** False until the reply that announced it was sent; notifications wait in `early` until then. */
  live: boolean;
  early: string[];
}

let connectionSeq = 0;

export function createWebSocketHandler(
  dispatcher: RpcDispatcher,
  notifier: Notifier,
  limits: WebSocketLimits,
  log: Logger,
  /** Methods a connection holds for itself (personal.ts: its own unlocks), closed with it. */
  perConnection?: () => { readonly methods: ReadonlyMap<string, MethodSpec>; close(): void },
): WebSocketHandler & { closeAll(): void } {
  const open = new Set<() => void>();

  const handler: WebSocketHandler = (conn) => {
    const subs = new Map<string, Subscription>();
    const key = `ws:${++connectionSeq}`;
    const gone = new Cancel();
    const origin = { client: { connection: key, address: key }, gone };
    const outbox = new Outbox(conn, notifier.outboxes);
    let inFlight = 0;
    /** Subscriptions made by the message being dispatched (its methods run synchronously up to their first await). */
    let creating: Subscription[] | undefined;

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
      const crit = kind === 'logs' ? ((args[1] as FilterCriteria | undefined) ?? { addresses: [], topics: [] }) : undefined;
      const sub: Subscription = {
        kind: kind as Subscriber['kind'],
        outbox,
        prefix: '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"' + id + '","result":',
        full: args[1] === true,
        ...(crit && { crit, critKey: criteriaKey(crit) }),
        stop: () => {},
        live: creating === undefined,
        early: [],
        deliver(text) {
          if (!subs.has(id)) return;
          if (sub.live) outbox.push(text);
          else if (sub.early.length < MAX_EARLY) sub.early.push(text);
        },
      };
      sub.stop = notifier.add(sub);
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
      outbox.discard();
      gone.abort(new Error('connection closed'));
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
      const replied = dispatcher.handle(text, { ...origin, local });
      const created = creating;
      creating = undefined;
      replied.then(
        (reply) => {
          inFlight--;
          if (reply !== undefined) conn.send(reply instanceof BatchReply ? reply.text() : reply);
          // Subscriptions made by this message start after the reply that named them.
          for (const sub of created) {
            sub.live = true;
            for (const n of sub.early.splice(0)) outbox.push(n);
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
