/**
 * Polling filters with geth's semantics: eth_getFilterChanges returns what arrived since the last
 * poll; a filter not polled for `ttlMs` (5 min) expires (injected clock).
 *
 * Filters are cheap, so that no client can hold them all by polling and an accepted block does not
 * match each of its logs against each log filter inside the accept (rpc-filters.test.ts):
 * - a log filter holds only its criteria and the last block it reported: a poll reads the logs of
 *   the blocks since from the chain's log index (in the scan lane, sized before it is built), so
 *   accepted blocks cost log filters nothing;
 * - block and pending-tx filters share one ring each of the last `maxChanges` block hashes / pooled
 *   txs (O(1) per block or tx, whatever the number of filters); a filter holds its position in it. A
 *   filter whose client did not poll before `maxChanges` more arrived has missed some: it is removed
 *   (its poll answers "filter not found"), so a client that stopped polling costs nothing;
 * - expiry is by last poll, in poll order (a Map re-inserted on poll): each call looks only at those
 *   due;
 * - a client (remote address over HTTP, connection over WebSocket) holds at most
 *   `maxFiltersPerClient` of the `maxFilters`: past it, -32000 naming the limit.
 * Tests: rpc-filters.test.ts.
 */
import { getRandomValues } from 'node:crypto';
import { hasErrorCode, toHex, type Clock, type Logger } from '@cornice/sdk';
import { EvmRpcError, type AcceptedBlock, type EvmBackend, type Hash, type TxView } from '../evm-backend.js';
import { parseFilterCriteria, resolveFilter, type FilterCriteria } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import type { ChainEvents } from './events.js';
import { txJson } from './format.js';
import { hexData, parseBool, parseString } from './hex.js';
import type { Lane } from './lanes.js';
import { logsReply } from './log-reply.js';
import type { CallContext, RawJson } from './request.js';

export interface FilterLimits {
  /** Filters installed at once, over all clients. */
  readonly maxFilters: number;
  /** Filters one client (remote address; a WebSocket connection) may hold. */
  readonly maxFiltersPerClient: number;
  /** Changes a filter may fall behind by between polls (blocks, pooled txs; log filters: the chain's logsMaxResults). */
  readonly maxChanges: number;
  /** A filter not polled for this long is removed (geth: 5 minutes). */
  readonly ttlMs: number;
}

export const DEFAULT_FILTER_LIMITS: FilterLimits = { maxFilters: 1_000, maxFiltersPerClient: 100, maxChanges: 10_000, ttlMs: 5 * 60_000 };

type FilterSpec = { readonly kind: 'logs'; readonly crit: FilterCriteria } | { readonly kind: 'blocks' } | { readonly kind: 'pending'; readonly fullTx: boolean };

interface Common {
  readonly owner: string;
  deadline: number;
  /** Log filters: the last block reported; block and pending filters: the last sequence number of their ring reported. */
  cursor: bigint;
}
type Filter = Common & FilterSpec;

/** A subscription/filter ID as geth makes them: 0x + 16 random bytes in hex, leading zeros trimmed. */
export function newId(): string {
  const hex = toHex(getRandomValues(new Uint8Array(16))).replace(/^0+/, '');
  return '0x' + (hex.length === 0 ? '0' : hex);
}

const notFound = (): EvmRpcError => new EvmRpcError(-32000, 'filter not found');

/** The last `size` items of a stream, numbered from 1: a filter reads those after the number it last saw. */
class Ring<T> {
  #items: (T | undefined)[] = [];
  /** Number of the newest item (0: none yet). */
  #last = 0n;

  constructor(private readonly size: number) {}

  get last(): bigint {
    return this.#last;
  }

  push(item: T): void {
    this.#last++;
    this.#items[Number(this.#last % BigInt(this.size))] = item;
  }

  /** The items numbered above `after`, or undefined when some of them are gone already. */
  since(after: bigint): T[] | undefined {
    const missed = this.#last - after;
    if (missed > BigInt(this.size)) return undefined;
    const out: T[] = [];
    for (let n = after + 1n; n <= this.#last; n++) out.push(this.#items[Number(n % BigInt(this.size))] as T);
    return out;
  }

  clear(): void {
    this.#items = [];
  }
}

/** The stop function of a listening that is `wanted`: the running one, or a new one from `start`; undefined (stopped) when not wanted. */
function listening(wanted: boolean, stop: (() => void) | undefined, start: () => () => void): (() => void) | undefined {
  if (wanted) return stop ?? start();
  stop?.();
  return undefined;
}

export class FilterRegistry {
  /** In poll order: the first is the next to expire. */
  readonly #filters = new Map<string, Filter>();
  readonly #byOwner = new Map<string, number>();
  readonly #blocks: Ring<Hash>;
  readonly #pending: Ring<TxView>;
  #blockFilters = 0;
  #pendingFilters = 0;
  /** Ends the listening to blocks (for block filters) and to pooled txs, while there are such filters. */
  #stopBlocks: (() => void) | undefined;
  #stopPending: (() => void) | undefined;

  constructor(
    private readonly backend: EvmBackend,
    private readonly events: ChainEvents,
    private readonly clock: Clock,
    private readonly limits: FilterLimits,
    private readonly log: Logger,
    private readonly scan: Lane,
  ) {
    this.#blocks = new Ring(limits.maxChanges);
    this.#pending = new Ring(limits.maxChanges);
  }

  get size(): number {
    return this.#filters.size;
  }

  install(spec: FilterSpec, owner: string): string {
    this.#expire();
    if (this.#filters.size >= this.limits.maxFilters) {
      throw new EvmRpcError(-32000, `too many filters installed (at most ${this.limits.maxFilters}): uninstall unused ones`);
    }
    if ((this.#byOwner.get(owner) ?? 0) >= this.limits.maxFiltersPerClient) {
      throw new EvmRpcError(-32000, `too many filters installed by this client (at most ${this.limits.maxFiltersPerClient}): uninstall unused ones`);
    }
    const id = newId();
    let cursor: bigint;
    if (spec.kind === 'logs') cursor = this.backend.blockNumber();
    else cursor = spec.kind === 'blocks' ? this.#blocks.last : this.#pending.last;
    this.#filters.set(id, { ...spec, owner, cursor, deadline: this.clock.now() + this.limits.ttlMs } as Filter);
    this.#byOwner.set(owner, (this.#byOwner.get(owner) ?? 0) + 1);
    this.#count(spec.kind, 1);
    return id;
  }

  /** What arrived since the last poll, formatted as geth does (logs, block hashes, tx hashes or txs). */
  async changes(id: string, ctx: CallContext): Promise<unknown[] | RawJson> {
    const f = this.#touch(id);
    if (f.kind === 'logs') return this.#logChanges(id, f, ctx);
    const ring = f.kind === 'blocks' ? this.#blocks : this.#pending;
    const items = ring.since(f.cursor);
    if (!items) {
      this.#remove(id);
      this.log.debug('eth filter dropped: changes not polled', { kind: f.kind, limit: this.limits.maxChanges });
      throw notFound();
    }
    f.cursor = ring.last;
    if (f.kind === 'blocks') return (items as Hash[]).map(hexData);
    return f.fullTx ? (items as TxView[]).map((t) => txJson(t)) : (items as TxView[]).map((t) => hexData(t.hash));
  }

  /** The logs of the blocks accepted since the last poll that match, read from the chain's log index. */
  async #logChanges(id: string, f: Filter & { kind: 'logs' }, ctx: CallContext): Promise<unknown[] | RawJson> {
    const head = this.backend.blockNumber();
    if (f.crit.blockHash || head <= f.cursor) return [];
    // The criteria's numeric bounds still apply; tags (latest, …) follow the head.
    let from = f.cursor + 1n;
    if (typeof f.crit.fromBlock === 'bigint' && f.crit.fromBlock > from) from = f.crit.fromBlock;
    const to = typeof f.crit.toBlock === 'bigint' && f.crit.toBlock < head ? f.crit.toBlock : head;
    const cursor = head;
    if (from > to) {
      f.cursor = cursor;
      return [];
    }
    return this.scan.run(ctx.client, ctx.signal, async () => {
      let logs;
      try {
        logs = await this.backend.logs({ fromBlock: from, toBlock: to, addresses: f.crit.addresses, topics: f.crit.topics }, ctx.signal);
      } catch (e) {
        // Too much since the last poll (the chain's -32005): the filter is removed, as a buffer that overflowed.
        if (hasErrorCode(e, 'EvmRpc') && (e as EvmRpcError).rpcCode === -32005) {
          this.#remove(id);
          this.log.debug('eth filter dropped: changes not polled', { kind: 'logs' });
        }
        throw e;
      }
      const reply = await logsReply(logs, ctx.budget, ctx.signal);
      f.cursor = cursor;
      return reply;
    });
  }

  /** Every log matching a log filter's criteria (eth_getFilterLogs). */
  async logs(id: string, ctx: CallContext): Promise<unknown[] | RawJson> {
    const f = this.#touch(id);
    if (f.kind !== 'logs') throw notFound();
    const filter = resolveFilter(f.crit, this.backend.blockNumber());
    if (!filter) return [];
    return this.scan.run(ctx.client, ctx.signal, async () => logsReply(await this.backend.logs(filter, ctx.signal), ctx.budget, ctx.signal));
  }

  uninstall(id: string): boolean {
    this.#expire();
    return this.#remove(id);
  }

  close(): void {
    for (const id of [...this.#filters.keys()]) this.#remove(id);
    this.#blocks.clear();
    this.#pending.clear();
  }

  /** The filter `id`, its deadline renewed (it moves to the end of the expiry order). */
  #touch(id: string): Filter {
    this.#expire();
    const f = this.#filters.get(id);
    if (!f) throw notFound();
    f.deadline = this.clock.now() + this.limits.ttlMs;
    this.#filters.delete(id);
    this.#filters.set(id, f);
    return f;
  }

  #remove(id: string): boolean {
    const f = this.#filters.get(id);
    if (!f) return false;
    this.#filters.delete(id);
    const n = (this.#byOwner.get(f.owner) ?? 1) - 1;
    if (n === 0) this.#byOwner.delete(f.owner);
    else this.#byOwner.set(f.owner, n);
    this.#count(f.kind, -1);
    return true;
  }

  /** Keeps the counts of block and pending filters, and listens to a stream only while some filter wants it. */
  #count(kind: Filter['kind'], by: number): void {
    if (kind === 'blocks') this.#blockFilters += by;
    else if (kind === 'pending') this.#pendingFilters += by;
    else return;
    this.#stopBlocks = listening(this.#blockFilters > 0, this.#stopBlocks, () => this.events.onBlock((b) => this.#onBlock(b)));
    this.#stopPending = listening(this.#pendingFilters > 0, this.#stopPending, () => this.events.onPending((t) => this.#pending.push(t)));
  }

  /** Removes the filters past their deadline: the first ones in poll order. */
  #expire(): void {
    const now = this.clock.now();
    for (const [id, f] of this.#filters) {
      if (f.deadline >= now) break;
      this.#remove(id);
    }
  }

  #onBlock({ block }: AcceptedBlock): void {
    this.#blocks.push(block.header.hash);
  }
}

const parseId = (v: unknown): string => parseString(v, 128);

export function filterMethods(filters: FilterRegistry): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  m.set('eth_newFilter', {
    args: [required(parseFilterCriteria)],
    run: (a, ctx) => filters.install({ kind: 'logs', crit: a[0] as FilterCriteria }, ctx.client.address),
  });
  m.set('eth_newBlockFilter', { args: [], run: (_a, ctx) => filters.install({ kind: 'blocks' }, ctx.client.address) });
  m.set('eth_newPendingTransactionFilter', {
    args: [optional(parseBool)],
    run: (a, ctx) => filters.install({ kind: 'pending', fullTx: a[0] === true }, ctx.client.address),
  });
  m.set('eth_getFilterChanges', { args: [required(parseId)], run: (a, ctx) => filters.changes(a[0] as string, ctx) });
  m.set('eth_getFilterLogs', { args: [required(parseId)], run: (a, ctx) => filters.logs(a[0] as string, ctx) });
  m.set('eth_uninstallFilter', { args: [required(parseId)], run: (a) => filters.uninstall(a[0] as string) });
  return m;
}
