/**
 * Polling filters with geth's semantics: eth_getFilterChanges returns what arrived since the last
 * poll; a filter not polled for `ttlMs` (5 min) expires (injected clock); the number of filters and
 * the changes buffered per filter are bounded: a filter whose client stopped polling while changes
 * keep coming is dropped (its next poll says "filter not found") rather than grown without end.
 */
import { getRandomValues } from 'node:crypto';
import { toHex, type Clock, type Logger } from '@cornice/sdk';
import { EvmRpcError, type AcceptedBlock, type EvmBackend, type Hash, type LogView, type TxView } from '../backend.js';
import { logMatches, parseFilterCriteria, resolveFilter, type FilterCriteria } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import type { ChainEvents } from './events.js';
import { logsJson, txJson } from './format.js';
import { hexData, parseBool, parseString } from './hex.js';

export interface FilterLimits {
  /** Filters installed at once, over all clients. */
  readonly maxFilters: number;
  /** Changes buffered per filter between polls. */
  readonly maxChanges: number;
  /** A filter not polled for this long is removed (geth: 5 minutes). */
  readonly ttlMs: number;
}

export const DEFAULT_FILTER_LIMITS: FilterLimits = { maxFilters: 1_000, maxChanges: 10_000, ttlMs: 5 * 60_000 };

type FilterSpec = { readonly kind: 'logs'; readonly crit: FilterCriteria } | { readonly kind: 'blocks' } | { readonly kind: 'pending'; readonly fullTx: boolean };

type Filter =
  | { readonly kind: 'logs'; readonly crit: FilterCriteria; changes: LogView[]; deadline: number }
  | { readonly kind: 'blocks'; changes: Hash[]; deadline: number }
  | { readonly kind: 'pending'; readonly fullTx: boolean; changes: TxView[]; deadline: number };

/** A subscription/filter ID as geth makes them: 0x + 16 random bytes in hex, leading zeros trimmed. */
export function newId(): string {
  const hex = toHex(getRandomValues(new Uint8Array(16))).replace(/^0+/, '');
  return '0x' + (hex.length === 0 ? '0' : hex);
}

const notFound = (): EvmRpcError => new EvmRpcError(-32000, 'filter not found');

/** The stop function of a listening that is `wanted`: the running one, or a new one from `start`; undefined (stopped) when not wanted. */
function listening(wanted: boolean, stop: (() => void) | undefined, start: () => () => void): (() => void) | undefined {
  if (wanted) return stop ?? start();
  stop?.();
  return undefined;
}

export class FilterRegistry {
  readonly #filters = new Map<string, Filter>();
  /** Ends the listening to blocks (for block and log filters) and to pooled txs, while there are such filters. */
  #stopBlocks: (() => void) | undefined;
  #stopPending: (() => void) | undefined;

  constructor(
    private readonly backend: EvmBackend,
    private readonly events: ChainEvents,
    private readonly clock: Clock,
    private readonly limits: FilterLimits,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.#filters.size;
  }

  install(filter: FilterSpec): string {
    this.#expire();
    if (this.#filters.size >= this.limits.maxFilters) {
      throw new EvmRpcError(-32000, `too many filters installed (at most ${this.limits.maxFilters}): uninstall unused ones`);
    }
    const id = newId();
    this.#filters.set(id, { ...filter, changes: [], deadline: this.clock.now() + this.limits.ttlMs } as Filter);
    this.#listen();
    return id;
  }

  /** What arrived since the last poll, formatted as geth does (logs, block hashes, tx hashes or txs). */
  changes(id: string): unknown[] {
    this.#expire();
    const f = this.#filters.get(id);
    if (!f) throw notFound();
    f.deadline = this.clock.now() + this.limits.ttlMs;
    const changes = f.changes;
    f.changes = [];
    if (f.kind === 'logs') return logsJson(changes as LogView[]);
    if (f.kind === 'blocks') return (changes as Hash[]).map(hexData);
    return f.fullTx ? (changes as TxView[]).map((t) => txJson(t)) : (changes as TxView[]).map((t) => hexData(t.hash));
  }

  /** Every log matching a log filter's criteria (eth_getFilterLogs). */
  async logs(id: string): Promise<unknown[]> {
    this.#expire();
    const f = this.#filters.get(id);
    if (f?.kind !== 'logs') throw notFound();
    f.deadline = this.clock.now() + this.limits.ttlMs;
    const filter = resolveFilter(f.crit, this.backend.blockNumber());
    return filter ? logsJson(await this.backend.logs(filter)) : [];
  }

  uninstall(id: string): boolean {
    this.#expire();
    const removed = this.#filters.delete(id);
    this.#listen();
    return removed;
  }

  close(): void {
    this.#filters.clear();
    this.#listen();
  }

  /** Listens to a stream only while some filter wants it: the chain then makes no views for nobody. */
  #listen(): void {
    let blocks = false;
    let pending = false;
    for (const f of this.#filters.values()) {
      if (f.kind === 'pending') pending = true;
      else blocks = true;
    }
    this.#stopBlocks = listening(blocks, this.#stopBlocks, () => this.events.onBlock((b) => this.#onBlock(b)));
    this.#stopPending = listening(pending, this.#stopPending, () => this.events.onPending((t) => this.#onPending(t)));
  }

  #expire(): void {
    const now = this.clock.now();
    let expired = false;
    for (const [id, f] of this.#filters) {
      if (f.deadline < now) {
        this.#filters.delete(id);
        expired = true;
      }
    }
    if (expired) this.#listen();
  }

  #push(id: string, f: Filter, items: readonly unknown[]): void {
    if (f.changes.length + items.length > this.limits.maxChanges) {
      this.#filters.delete(id);
      this.log.debug('eth filter dropped: changes not polled', { kind: f.kind, limit: this.limits.maxChanges });
      return;
    }
    for (const item of items) (f.changes as unknown[]).push(item);
  }

  #onBlock({ block, receipts }: AcceptedBlock): void {
    this.#expire();
    for (const [id, f] of this.#filters) {
      if (f.kind === 'blocks') this.#push(id, f, [block.header.hash]);
      else if (f.kind === 'logs') {
        const matched: LogView[] = [];
        for (const r of receipts) for (const l of r.logs) if (logMatches(l, f.crit)) matched.push(l);
        if (matched.length > 0) this.#push(id, f, matched);
      }
    }
  }

  #onPending(tx: TxView): void {
    for (const [id, f] of this.#filters) if (f.kind === 'pending') this.#push(id, f, [tx]);
  }
}

const parseId = (v: unknown): string => parseString(v, 128);

export function filterMethods(filters: FilterRegistry): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  m.set('eth_newFilter', { args: [required(parseFilterCriteria)], run: (a) => filters.install({ kind: 'logs', crit: a[0] as FilterCriteria }) });
  m.set('eth_newBlockFilter', { args: [], run: () => filters.install({ kind: 'blocks' }) });
  m.set('eth_newPendingTransactionFilter', {
    args: [optional(parseBool)],
    run: (a) => filters.install({ kind: 'pending', fullTx: a[0] === true }),
  });
  m.set('eth_getFilterChanges', { args: [required(parseId)], run: (a) => filters.changes(a[0] as string) });
  m.set('eth_getFilterLogs', { args: [required(parseId)], run: (a) => filters.logs(a[0] as string) });
  m.set('eth_uninstallFilter', { args: [required(parseId)], run: (a) => filters.uninstall(a[0] as string) });
  return m;
}
