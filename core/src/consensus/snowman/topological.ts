/**
 * Snowman's pure consensus: the tree of processing blocks rooted at the last accepted block, one
 * Snowball per node with processing children, transitive votes, and the decisions they lead to. No
 * timers, no network, no VM calls: the engine verifies a block before it adds it here, and accepts
 * and rejects in the VM what `accept()` decides (core/test/consensus/snowman/topological.test.ts
 * tests it alone).
 *
 * A finished poll's tally is recorded from the root down: a node's Snowball records the votes its
 * children got, and only a child with >= alpha votes is descended into; every other subtree records
 * an unsuccessful poll. When the root's Snowball finalizes on child C, C becomes the root and its
 * siblings' subtrees leave the tree. The preference follows the Snowball preferences from the root
 * to a leaf.
 */
import type { Block, Id } from '@cornice/sdk';
import type { SnowParams } from '../params.js';
import { Snowball } from '../snowball/snowball.js';

export interface TreeNode {
  readonly block: Block;
  readonly key: string;
  readonly parentKey: string;
  readonly height: number;
  /** When it joined the tree (ms, whatever clock the caller gives). */
  readonly since: number;
  /** Keys of processing children, in arrival order. */
  readonly children: string[];
  /** Decides among the children; created with the first child. */
  sb: Snowball | undefined;
  /** Validators sent this block in a PushQuery already: later polls ask them by ID (PullQuery). */
  pushedTo?: Set<string>;
}

/**
 * Blocks known outside the tree whose votes still count for their processing ancestors: the blocks
 * the engine holds while their parent is fetched.
 */
export interface OutsideTree {
  /** The parent key of a block known outside the tree, or undefined. */
  heldParentOf(key: string): string | undefined;
  /** How many there are (bounds the walk up a chain of them). */
  readonly heldCount: number;
}

/** What recording a poll did: whether every node on the voted path reached alpha, and whether the root's did (undefined: nothing processing). */
export interface PollRecord {
  readonly succeeded: boolean;
  readonly root: 'succeeded' | 'failed' | undefined;
}

const NO_PATH: PollRecord = Object.freeze({ succeeded: false, root: undefined });
const ROOT_FAILED: PollRecord = Object.freeze({ succeeded: false, root: 'failed' });
const PATH_FAILED: PollRecord = Object.freeze({ succeeded: false, root: 'succeeded' });
const PATH_SUCCEEDED: PollRecord = Object.freeze({ succeeded: true, root: 'succeeded' });

export class Topological {
  readonly #params: SnowParams;
  readonly #outside: OutsideTree | undefined;
  #root: TreeNode;
  readonly #processing = new Map<string, TreeNode>();
  #preference: TreeNode;
  /** The preferred branch below the root (root's preferred child first). */
  #preferredPath: TreeNode[] = [];

  /** `last`: the last accepted block, the root; `height` its height; `since` the caller's time now. */
  constructor(params: SnowParams, last: Block, height: number, since: number, outside?: OutsideTree) {
    this.#params = params;
    this.#outside = outside;
    this.#root = { block: last, key: last.id.key, parentKey: last.parentId.key, height, since, children: [], sb: undefined };
    this.#preference = this.#root;
  }

  /** The last accepted block's node. */
  get root(): TreeNode {
    return this.#root;
  }

  /** The preferred tip's node (the root when nothing is processing). */
  get preferred(): TreeNode {
    return this.#preference;
  }

  /** Processing blocks. */
  get size(): number {
    return this.#processing.size;
  }

  /** A processing block's node. */
  get(key: string): TreeNode | undefined {
    return this.#processing.get(key);
  }

  isProcessing(key: string): boolean {
    return this.#processing.has(key);
  }

  /** A processing block or the root. */
  lookup(key: string): TreeNode | undefined {
    return this.#processing.get(key) ?? (key === this.#root.key ? this.#root : undefined);
  }

  /**
   * Adds a verified block under `parent` (the root or a processing block, see lookup) at
   * `parent.height + 1`: the parent's Snowball gets it as a choice, or is created with it.
   */
  add(block: Block, key: string, parent: TreeNode, since: number): TreeNode {
    const node: TreeNode = { block, key, parentKey: parent.key, height: parent.height + 1, since, children: [], sb: undefined };
    this.#processing.set(key, node);
    parent.children.push(key);
    if (parent.sb) parent.sb.add(key);
    else parent.sb = new Snowball(this.#params, key);
    return node;
  }

  /** The processing block a vote for `key` counts for: the block itself, or the nearest processing ancestor of a block outside the tree. */
  voteTarget(key: string): TreeNode | undefined {
    const outside = this.#outside;
    if (!outside) return this.#processing.get(key);
    let k: string | undefined = key;
    for (let i = 0; i <= outside.heldCount; i++) {
      const node = this.#processing.get(k);
      if (node) return node;
      k = outside.heldParentOf(k);
      if (k === undefined) return undefined;
    }
    return undefined;
  }

  /** Transitive tally of `votes` (block key -> weight): a vote for B counts for B and each processing ancestor. */
  tally(votes: ReadonlyMap<string, number>, onUnknown?: (key: string, weight: number) => void): Map<string, number> {
    const tally = new Map<string, number>();
    for (const [key, weight] of votes) {
      const target = this.voteTarget(key);
      if (!target) onUnknown?.(key, weight);
      for (let n = target; n; n = this.#processing.get(n.parentKey)) {
        tally.set(n.key, (tally.get(n.key) ?? 0) + weight);
      }
    }
    return tally;
  }

  /**
   * Records one poll's `tally` from the root down the voted path (the nodes off it falter). Its
   * `succeeded` is true when there was a path (the root has children) and every node on it reached alpha.
   */
  recordPoll(tally: ReadonlyMap<string, number>): PollRecord {
    const root = this.#root;
    if (!root.sb) return NO_PATH;
    const alpha = this.#params.alpha;
    const faltering: TreeNode[] = [];
    let allOk = true;
    let rootOk = false;
    for (let node: TreeNode | undefined = root; node?.sb; ) {
      const counts = new Map<string, number>();
      for (const c of node.children) {
        const t = tally.get(c);
        if (t !== undefined) counts.set(c, t);
      }
      const ok = node.sb.recordPoll(counts);
      allOk &&= ok;
      if (node === root) rootOk = ok;
      let next: TreeNode | undefined;
      for (const c of node.children) {
        const child = this.#processing.get(c);
        if (!child) continue;
        if (next === undefined && (tally.get(c) ?? 0) >= alpha) next = child;
        else faltering.push(child);
      }
      node = next;
    }
    while (faltering.length > 0) {
      const n = faltering.pop() as TreeNode;
      if (!n.sb) continue;
      n.sb.recordUnsuccessfulPoll();
      for (const c of n.children) {
        const child = this.#processing.get(c);
        if (child) faltering.push(child);
      }
    }
    return !rootOk ? ROOT_FAILED : allOk ? PATH_SUCCEEDED : PATH_FAILED;
  }

  /** Whether the root's Snowball has finalized (its choice can be accepted). */
  get rootFinalized(): boolean {
    return this.#root.sb?.finalized === true;
  }

  /**
   * The root's child its Snowball finalized on, when it has: `node` undefined when that child is not
   * processing (a bug: see forgetRootDecision).
   */
  finalizedChild(): { key: string; node: TreeNode | undefined } | undefined {
    const sb = this.#root.sb;
    if (!sb?.finalized) return undefined;
    return { key: sb.preference, node: this.#processing.get(sb.preference) };
  }

  /** Drops the root's Snowball (its finalized choice was lost), so nothing more is decided at this height. */
  forgetRootDecision(): void {
    this.#root.sb = undefined;
  }

  /**
   * Makes `chosen`, the root's finalized child (finalizedChild), the root, and takes its siblings and
   * all their descendants out of the tree; returns those, parents first (depth first, in arrival order).
   */
  accept(chosen: TreeNode): TreeNode[] {
    const old = this.#root;
    this.#processing.delete(chosen.key);
    this.#root = chosen;
    const rejected: TreeNode[] = [];
    const stack = old.children.filter((k) => k !== chosen.key).reverse();
    while (stack.length > 0) {
      const key = stack.pop() as string;
      const node = this.#processing.get(key);
      if (!node) continue;
      this.#processing.delete(key);
      rejected.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as string);
    }
    return rejected;
  }

  /** Follows the Snowball preferences from the root to a leaf; returns the leaf when it changed. */
  updatePreference(): TreeNode | undefined {
    let node = this.#root;
    const path: TreeNode[] = [];
    while (node.sb) {
      const next = this.#processing.get(node.sb.preference);
      if (!next) break;
      node = next;
      path.push(node);
    }
    this.#preferredPath = path;
    if (node.key === this.#preference.key) return undefined;
    this.#preference = node;
    return node;
  }

  /**
   * Our preferred block at `height` when it is the root's or above: the block on the preferred
   * branch, or the preferred tip when the branch is shorter; undefined below the root.
   */
  preferredAt(height: number): Id | undefined {
    const root = this.#root;
    if (height > root.height) {
      // Indexed by height from the path's first node (the path may trail a root that just moved).
      const first = this.#preferredPath[0];
      const node = first ? this.#preferredPath[height - first.height] : undefined;
      return node && node.height === height ? node.block.id : this.#preference.block.id;
    }
    return height === root.height ? root.block.id : undefined;
  }

  /** Nodes with a Snowball on the preferred branch from the root (processing blocks preferred). */
  get preferredDepth(): number {
    let depth = 0;
    for (let n: TreeNode | undefined = this.#root; n?.sb; n = this.#processing.get(n.sb.preference)) depth += 1;
    return depth;
  }

  /** When the oldest processing block joined, if any is processing. */
  get oldestSince(): number | undefined {
    let oldest: number | undefined;
    for (const n of this.#processing.values()) if (oldest === undefined || n.since < oldest) oldest = n.since;
    return oldest;
  }
}
