/**
 * What the engine knows of blocks outside its tree, and how it fetches the ones it lacks: blocks
 * held while their parent is fetched (bounded, with a TTL), outstanding Gets (one per block, with a
 * deadline), blocks recently decided or dropped (votes for them are not fetched again), blocks whose
 * verify failed lately (not verified again for failedVerifyTtlMs), and the accepted blocks peers
 * reported that this node lacks (`stats.behind`).
 */
import type { Block, Id, Logger, ShortId } from '@cornice/sdk';
import { describe, heightOf, type EngineLimits } from './options.js';
import type { OutsideTree, Topological } from './topological.js';
import type { EngineTransport, Scheduler } from './types.js';

interface Held {
  readonly block: Block;
  readonly since: number;
}

interface OutstandingGet {
  readonly requestId: number;
  readonly blockKey: string;
  readonly from: string;
  readonly since: number;
}

/** A set that forgets its oldest entries beyond `max`. */
class RecentSet {
  readonly #items = new Set<string>();
  constructor(private readonly max: number) {}
  add(key: string): void {
    if (this.#items.has(key)) return;
    this.#items.add(key);
    if (this.#items.size > this.max) {
      const oldest = this.#items.values().next().value;
      if (oldest !== undefined) this.#items.delete(oldest);
    }
  }
  has(key: string): boolean {
    return this.#items.has(key);
  }
}

export interface AncestorsOptions {
  limits: EngineLimits;
  scheduler: Scheduler;
  log: Logger;
  transport: Pick<EngineTransport, 'get'>;
  /** The engine's tree, once started. */
  tree: () => Topological | undefined;
  /** Whether the engine is running (nothing is fetched otherwise). */
  running: () => boolean;
  /** A request ID no poll or Get in flight uses. */
  newRequestId: () => number;
}

export class Ancestors implements OutsideTree {
  readonly #o: AncestorsOptions;
  readonly #limits: EngineLimits;
  readonly #held = new Map<string, Held>();
  readonly #heldByParent = new Map<string, Set<string>>();
  readonly #getsByBlock = new Map<string, OutstandingGet>();
  readonly #getsByRequest = new Map<number, OutstandingGet>();
  readonly #recentlyDecided: RecentSet;
  /** Blocks whose verify failed lately (key -> when): not verified again before failedVerifyTtlMs. */
  readonly #failedVerify = new Map<string, number>();
  #lastGc = Number.NEGATIVE_INFINITY;
  /** The highest accepted block peers reported that this node lacks (see stats.behind). */
  #behind: { key: string; height: number | undefined; since: number } | undefined;

  constructor(opts: AncestorsOptions) {
    this.#o = opts;
    this.#limits = opts.limits;
    this.#recentlyDecided = new RecentSet(opts.limits.maxRecentlyDecided);
  }

  /** Blocks waiting for an unknown parent. */
  get heldCount(): number {
    return this.#held.size;
  }

  heldParentOf(key: string): string | undefined {
    return this.#held.get(key)?.block.parentId.key;
  }

  heldBlock(key: string): Block | undefined {
    return this.#held.get(key)?.block;
  }

  isHeld(key: string): boolean {
    return this.#held.has(key);
  }

  /** Outstanding Gets. */
  get outstandingGets(): number {
    return this.#getsByRequest.size;
  }

  hasRequest(requestId: number): boolean {
    return this.#getsByRequest.has(requestId);
  }

  /** Remembers a block as decided (accepted, rejected, or invalid for good): votes for it are not fetched again. */
  decided(key: string): void {
    this.#recentlyDecided.add(key);
  }

  isDecided(key: string): boolean {
    return this.#recentlyDecided.has(key);
  }

  /** Whether the block is in the tree, held, decided, being fetched or failed verify lately. */
  knows(key: string): boolean {
    const tree = this.#o.tree();
    return (
      tree?.isProcessing(key) === true ||
      key === tree?.root.key ||
      this.#held.has(key) ||
      this.#recentlyDecided.has(key) ||
      this.#getsByBlock.has(key) ||
      this.failedLately(key)
    );
  }

  // ---- held blocks -----------------------------------------------------------------------------

  hold(block: Block, key: string, parentKey: string, source: ShortId | undefined): void {
    if (!this.#held.has(key)) {
      while (this.#held.size >= this.#limits.maxHeldBlocks) {
        const oldest = this.#held.keys().next().value;
        if (oldest === undefined) break;
        this.#unhold(oldest);
      }
      this.#held.set(key, { block, since: this.#o.scheduler.now() });
      let siblings = this.#heldByParent.get(parentKey);
      if (!siblings) this.#heldByParent.set(parentKey, (siblings = new Set()));
      siblings.add(key);
    }
    if (source) this.fetchMissingAncestor(key, source);
  }

  /** Asks `from` for the unknown parent at the bottom of the held chain that `key` belongs to. */
  fetchMissingAncestor(key: string, from: ShortId): void {
    let h = this.#held.get(key);
    for (let i = 0; h && i <= this.#held.size; i++) {
      const parent = this.#held.get(h.block.parentId.key);
      if (!parent) break;
      h = parent;
    }
    const tree = this.#o.tree();
    // A missing link at or below the last accepted height can only conflict with it: leave it to expire.
    const lowest = h ? heightOf(h.block) : undefined;
    if (!h || (lowest !== undefined && lowest <= (tree?.root.height ?? 0) + 1)) return;
    const missing = h.block.parentId;
    const missingKey = missing.key;
    if (tree?.isProcessing(missingKey) || missingKey === tree?.root.key || this.#recentlyDecided.has(missingKey) || this.failedLately(missingKey)) return;
    this.fetch(missing, missingKey, from);
  }

  #unhold(key: string): Held | undefined {
    const h = this.#held.get(key);
    if (!h) return undefined;
    this.#held.delete(key);
    const parentKey = h.block.parentId.key;
    const siblings = this.#heldByParent.get(parentKey);
    siblings?.delete(key);
    if (siblings?.size === 0) this.#heldByParent.delete(parentKey);
    return h;
  }

  /** Takes the held blocks whose parent is `parentKey` out of the held set. */
  takeHeldChildren(parentKey: string): Block[] {
    const keys = this.#heldByParent.get(parentKey);
    if (!keys) return [];
    const out: Block[] = [];
    for (const k of [...keys]) {
      const h = this.#unhold(k);
      if (h) out.push(h.block);
    }
    return out;
  }

  /**
   * Lets go of the held blocks waiting on `key`, remembering them as decided when `key` is invalid for
   * good (`remember`), not when its verify merely failed (they may come again once it passes).
   */
  dropHeldDescendants(key: string, remember = true): void {
    const stack = [key];
    while (stack.length > 0) {
      const k = stack.pop() as string;
      const children = this.#heldByParent.get(k);
      if (!children) continue;
      for (const c of [...children]) {
        this.#unhold(c);
        if (remember) this.#recentlyDecided.add(c);
        stack.push(c);
      }
    }
  }

  // ---- failed verification ---------------------------------------------------------------------

  /**
   * Remembers a block whose verify threw, for failedVerifyTtlMs: a verify may fail for a while and
   * then pass (a timestamp ahead of this node's clock, a VM that lost track of the parent's state), so
   * it is not remembered as decided; a block that comes again later is verified again (test "a block
   * whose verify failed is verified again when it comes back").
   */
  noteFailedVerify(key: string): void {
    this.#failedVerify.delete(key);
    this.#failedVerify.set(key, this.#o.scheduler.now());
    if (this.#failedVerify.size > this.#limits.maxRecentlyDecided) {
      const oldest = this.#failedVerify.keys().next().value;
      if (oldest !== undefined) this.#failedVerify.delete(oldest);
    }
  }

  failedLately(key: string): boolean {
    const at = this.#failedVerify.get(key);
    if (at === undefined) return false;
    if (this.#o.scheduler.now() - at < this.#limits.failedVerifyTtlMs) return true;
    this.#failedVerify.delete(key);
    return false;
  }

  // ---- Gets ------------------------------------------------------------------------------------

  /** Asks `from` for a block, unless a Get for it is outstanding (and not past getTimeoutMs) or too many are. */
  fetch(blockId: Id, blockKey: string, from: ShortId): void {
    if (!this.#o.running()) return;
    const now = this.#o.scheduler.now();
    const previous = this.#getsByBlock.get(blockKey);
    if (previous) {
      if (now - previous.since <= this.#limits.getTimeoutMs) return;
      this.#getsByBlock.delete(blockKey);
      this.#getsByRequest.delete(previous.requestId);
    }
    if (this.#getsByRequest.size >= this.#limits.maxOutstandingGets) {
      this.#lastGc = Number.NEGATIVE_INFINITY;
      this.gc();
      if (this.#getsByRequest.size >= this.#limits.maxOutstandingGets) return;
    }
    const requestId = this.#o.newRequestId();
    const g: OutstandingGet = { requestId, blockKey, from: from.key, since: now };
    this.#getsByBlock.set(blockKey, g);
    this.#getsByRequest.set(requestId, g);
    try {
      this.#o.transport.get(from, requestId, blockId);
    } catch (err) {
      this.#o.log.warn('get failed', { error: describe(err) });
    }
  }

  /** Ends the Get `requestId` to `fromKey`: the key of the block it asked for, or undefined when there is no such Get. */
  takeGet(requestId: number, fromKey: string): string | undefined {
    const g = this.#getsByRequest.get(requestId);
    if (!g || g.from !== fromKey) return undefined;
    this.#getsByRequest.delete(requestId);
    this.#getsByBlock.delete(g.blockKey);
    return g.blockKey;
  }

  /** Forgets held blocks and Get requests that are too old (at most once a second). */
  gc(): void {
    const now = this.#o.scheduler.now();
    if (now - this.#lastGc < 1_000) return;
    this.#lastGc = now;
    const rootHeight = this.#o.tree()?.root.height ?? 0;
    for (const [key, h] of this.#held) {
      if (now - h.since > this.#limits.heldTtlMs || (heightOf(h.block) ?? Number.POSITIVE_INFINITY) <= rootHeight) {
        this.#unhold(key);
      }
    }
    for (const [rid, g] of this.#getsByRequest) {
      if (now - g.since > this.#limits.getTimeoutMs) {
        this.#getsByRequest.delete(rid);
        this.#getsByBlock.delete(g.blockKey);
      }
    }
  }

  /** Forgets the held blocks and the Gets in flight (the engine stopped). */
  clear(): void {
    this.#held.clear();
    this.#heldByParent.clear();
    this.#getsByBlock.clear();
    this.#getsByRequest.clear();
  }

  // ---- catching up -----------------------------------------------------------------------------

  /**
   * A validator says it accepted `accepted`. When this node has not: the block (and, one Get at a
   * time, its missing ancestors) is fetched from that validator and then polled like any other, so a
   * node that missed blocks catches up while running; `stats.behind` says so until it has (test
   * "a node that missed blocks catches up from the accepted block in chits").
   */
  noteAccepted(from: ShortId, accepted: Id): void {
    const tree = this.#o.tree();
    if (!tree) return;
    const root = tree.root;
    const key = accepted.key;
    if (key === root.key || this.#recentlyDecided.has(key) || this.failedLately(key)) return;
    const processing = tree.get(key);
    const held = this.#held.get(key);
    const height = processing?.height ?? (held ? heightOf(held.block) : undefined);
    if (height !== undefined && height <= root.height) return;
    if (!this.#behind || (height !== undefined && (this.#behind.height === undefined || height > this.#behind.height))) {
      this.#behind = { key, height, since: this.#behind?.since ?? this.#o.scheduler.now() };
    }
    if (processing) return; // polls decide it
    if (held) this.fetchMissingAncestor(key, from);
    else if (!this.#getsByBlock.has(key)) this.fetch(accepted, key, from);
  }

  /** A block came (fetched, pushed or built): when it is the accepted block a peer named, how far behind this node is. */
  noteArrived(key: string, block: Block): void {
    if (this.#behind?.key === key && this.#behind.height === undefined) this.#behind.height = heightOf(block);
  }

  /** stats.behind: peers reported accepted blocks above ours and nothing was accepted here for behindAfterMs. */
  behindReport(lastAcceptedAt: number): { peerHeight: number | undefined; forMs: number } | undefined {
    const b = this.#behind;
    if (!b) return undefined;
    const forMs = this.#o.scheduler.now() - Math.max(b.since, lastAcceptedAt);
    return forMs >= this.#limits.behindAfterMs ? { peerHeight: b.height, forMs } : undefined;
  }

  /** Forgets the behind report once this node has reached it (or found it at a decided height). */
  clearBehind(): void {
    const b = this.#behind;
    const root = this.#o.tree()?.root;
    if (!b || !root) return;
    if (b.key === root.key || (b.height !== undefined && b.height <= root.height) || (b.height === undefined && this.#recentlyDecided.has(b.key))) {
      this.#behind = undefined;
    }
  }
}
