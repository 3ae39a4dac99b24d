/**
 * Subscription notifications (newHeads, logs, newPendingTransactions, newAcceptedTransactions) at a
 * bounded cost: never a serialization per log per subscription inside a block's accept, which makes
 * a tx's confirmation wait on subscribers (rpc-subscriptions.test.ts; test/e2e/evm-abuse.test.ts
 * "20 WebSockets x 256 logs subscriptions"). So:
 * - each event (a block, a pooled tx) is one job; the listener only queues it, and jobs run in
 *   slices of SLICE_MS with turns of the event loop between (the first slice at once), so an accept
 *   waits for at most one slice;
 * - each log, header and tx of an event is serialized once, lazily, and shared by every
 *   notification that carries it; which logs a filter matches is worked out once per distinct
 *   filter per block (many subscriptions with the same filter cost one);
 * - a connection's notifications wait in its outbox (outbox.ts), whose bounds close a connection
 *   that falls too far behind: so one block's work for subscriptions is bounded by those queues,
 *   not by subscriptions × logs.
 * Tests: rpc-subscriptions.test.ts.
 */
import type { AcceptedBlock, LogView, TxView } from '../evm-backend.js';
import { logMatches, type FilterCriteria } from './args.js';
import type { ChainEvents } from './events.js';
import { headerJson, logText, txJson } from './format.js';
import { hexData } from './hex.js';
import type { Outbox, Outboxes } from './outbox.js';
import { SLICE_MS } from './request.js';

const turn = (fn: () => void): void => void setImmediate(fn);

/** A subscription as the notifier sees it. */
export interface Subscriber {
  readonly kind: 'newHeads' | 'logs' | 'newPendingTransactions' | 'newAcceptedTransactions';
  readonly outbox: Outbox;
  /** `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x…","result":` */
  readonly prefix: string;
  readonly full: boolean;
  readonly crit?: FilterCriteria;
  /** Subscriptions with the same key match the same logs. */
  readonly critKey?: string;
  /** Called with each notification's text. */
  deliver(text: string): void;
}

/** The key of a logs filter: equal keys, equal matches. */
export function criteriaKey(crit: FilterCriteria): string {
  const hashes = (xs: readonly Uint8Array[]) => xs.map(hexData).join(',');
  const topics = crit.topics.map((t) => (t === null ? '*' : hashes(t))).join('|');
  return `${crit.blockHash ? hexData(crit.blockHash) : ''}/${String(crit.fromBlock ?? '')}/${String(crit.toBlock ?? '')}/${hashes(crit.addresses)}/${topics}`;
}

/** An event's shared texts, each made once when first needed. */
class BlockTexts {
  readonly logs: LogView[] = [];
  readonly #logTexts: (string | undefined)[] = [];
  readonly #matches = new Map<string, number[]>();
  #header: string | undefined;
  readonly #txs = new Map<number, string>();

  constructor(
    readonly event: AcceptedBlock,
    private readonly stats: NotifierStats,
  ) {
    for (const r of event.receipts) for (const l of r.logs) this.logs.push(l);
  }

  header(): string {
    return (this.#header ??= JSON.stringify(headerJson(this.event.block.header)));
  }

  log(i: number): string {
    let text = this.#logTexts[i];
    if (text === undefined) {
      this.#logTexts[i] = text = logText(this.logs[i]!);
      this.stats.logsSerialized++;
    }
    return text;
  }

  matches(key: string, crit: FilterCriteria): number[] {
    let m = this.#matches.get(key);
    if (!m) {
      m = [];
      for (let i = 0; i < this.logs.length; i++) if (logMatches(this.logs[i]!, crit)) m.push(i);
      this.#matches.set(key, m);
    }
    return m;
  }

  tx(i: number, full: boolean): string {
    const { hash, number, timestamp } = this.event.block.header;
    const t = this.event.block.transactions[i]!;
    if (!full) return '"' + hexData(t.hash) + '"';
    let s = this.#txs.get(i);
    if (s === undefined) this.#txs.set(i, (s = JSON.stringify(txJson(t, hash, number, i, timestamp))));
    return s;
  }
}

class PendingTexts {
  #full: string | undefined;
  constructor(readonly tx: TxView) {}
  text(full: boolean): string {
    return full ? (this.#full ??= JSON.stringify(txJson(this.tx))) : '"' + hexData(this.tx.hash) + '"';
  }
}

interface Job {
  readonly subs: readonly Subscriber[];
  next: number;
  /** For a logs subscriber: the next of its matches to deliver. */
  within: number;
  readonly texts: BlockTexts | PendingTexts;
}

const SUFFIX = '}}';

/** What the notifier did (tests, metrics). */
export interface NotifierStats {
  /** Logs turned into JSON text (once per log of a block, whatever the number of subscriptions). */
  logsSerialized: number;
}

export class Notifier {
  readonly #blockSubs = new Set<Subscriber>();
  readonly #pendingSubs = new Set<Subscriber>();
  #stopBlocks: (() => void) | undefined;
  #stopPending: (() => void) | undefined;
  readonly #jobs: Job[] = [];
  #working = false;

  constructor(
    private readonly events: ChainEvents,
    /** The connections' outboxes (outbox.ts). */
    readonly outboxes: Outboxes,
  ) {}

  readonly stats: NotifierStats = { logsSerialized: 0 };

  /** Notifications waiting over all connections (tests, metrics). */
  get totalQueued(): number {
    return this.outboxes.totalQueued;
  }

  add(sub: Subscriber): () => void {
    const pending = sub.kind === 'newPendingTransactions';
    (pending ? this.#pendingSubs : this.#blockSubs).add(sub);
    this.#listen();
    return () => {
      (pending ? this.#pendingSubs : this.#blockSubs).delete(sub);
      this.#listen();
    };
  }

  close(): void {
    this.#blockSubs.clear();
    this.#pendingSubs.clear();
    this.#jobs.length = 0;
    this.#listen();
  }

  // ---------------------------------------------------------------- events

  #listen(): void {
    if (this.#blockSubs.size > 0) this.#stopBlocks ??= this.events.onBlock((b) => this.#enqueue(new BlockTexts(b, this.stats), this.#blockSubs));
    else {
      this.#stopBlocks?.();
      this.#stopBlocks = undefined;
    }
    if (this.#pendingSubs.size > 0) this.#stopPending ??= this.events.onPending((t) => this.#enqueue(new PendingTexts(t), this.#pendingSubs));
    else {
      this.#stopPending?.();
      this.#stopPending = undefined;
    }
  }

  #enqueue(texts: BlockTexts | PendingTexts, subs: ReadonlySet<Subscriber>): void {
    this.#jobs.push({ subs: [...subs], next: 0, within: 0, texts });
    if (!this.#working) this.#work();
  }

  /** Notifications (or subscriptions passed) since the last look at the clock, and the slice's end. */
  #steps = 0;
  #until = 0;

  /** Whether the slice is over: a look at the clock every 64 steps (a notification is cheap next to a look). */
  #sliceOver(): boolean {
    return (++this.#steps & 63) === 0 && performance.now() > this.#until;
  }

  /** Runs jobs for at most SLICE_MS, then goes on in the next turn. */
  #work(): void {
    this.#working = true;
    this.#until = performance.now() + SLICE_MS;
    while (this.#jobs.length > 0) {
      const job = this.#jobs[0]!;
      while (job.next < job.subs.length) {
        const sub = job.subs[job.next]!;
        if (this.#sliceOver() || !(sub.outbox.closed || this.#emit(job, sub))) {
          turn(() => this.#work());
          return;
        }
        job.next++;
        job.within = 0;
      }
      this.#jobs.shift();
    }
    this.#working = false;
  }

  /** Delivers `job`'s notifications to `sub`; false when the slice ended first (it resumes where it stopped). */
  #emit(job: Job, sub: Subscriber): boolean {
    const t = job.texts;
    if (t instanceof PendingTexts) {
      sub.deliver(sub.prefix + t.text(sub.full) + SUFFIX);
      return true;
    }
    if (sub.kind === 'newHeads') {
      sub.deliver(sub.prefix + t.header() + SUFFIX);
      return true;
    }
    if (sub.kind === 'newAcceptedTransactions') {
      const n = t.event.block.transactions.length;
      for (; job.within < n; job.within++) {
        if (sub.outbox.closed) return true;
        if (this.#sliceOver()) return false;
        sub.deliver(sub.prefix + t.tx(job.within, sub.full) + SUFFIX);
      }
      return true;
    }
    const matched = t.matches(sub.critKey!, sub.crit!);
    for (; job.within < matched.length; job.within++) {
      if (sub.outbox.closed) return true;
      if (this.#sliceOver()) return false;
      sub.deliver(sub.prefix + t.log(matched[job.within]!) + SUFFIX);
    }
    return true;
  }
}
