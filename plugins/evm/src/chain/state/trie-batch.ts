/**
 * Many puts into a Merkle Patricia trie as one update: each node on the changed paths is read,
 * encoded and hashed once, where @ethereumjs' `put` does it once per key.
 *
 * A block's accounts reach the state trie when the state manager flushes (`FastAccountStateManager`,
 * accounts.ts). Put one by one, every put walks its path from the root and then re-encodes and
 * re-hashes every node on it, so the root and the upper branches of a 64-transfer block (~128
 * accounts) were encoded and hashed once per account: `put` was a visible share of the node's main
 * thread under pipelined transfers (bench/evm.mjs). Here the new keys are sorted and merged into the trie in one descent; the
 * changed nodes are then encoded bottom-up, and the ones of 32 bytes or more (and the root) stored
 * under their hash, as `put` stores them (`_formatNode`), through the trie's database (so its
 * checkpoints see the writes). The root is the same as after the same puts one by one: the tests
 * compare both, over random and adversarial key sets.
 *
 * Only puts of keys of one length (hashed keys: no value sits in a branch) are done here;
 * `putMany` reports false, doing nothing, for anything else, and the caller puts one by one.
 */
import { BranchMPTNode, ExtensionMPTNode, LeafMPTNode, type MerklePatriciaTrie, type MPTNode } from '@ethereumjs/mpt';
import { equalsBytes } from '@ethereumjs/util';
import { toHex } from '@cornice/sdk';

/** A child as the trie stores it: a hash, an embedded node's items, or nothing. */
type Ref = Uint8Array | Uint8Array[] | null;

/** A node this update makes: its children are new nodes or refs left as they were. */
type Fresh =
  | { kind: 'leaf'; key: number[]; value: Uint8Array }
  | { kind: 'ext'; key: number[]; child: Child }
  | { kind: 'branch'; children: Child[]; value: Uint8Array | null };
type Child = Fresh | Ref;

interface Update {
  key: number[];
  value: Uint8Array;
}

/** The trie internals used here; a version without them gets the one-by-one path. */
interface TrieInternals {
  hash(bytes: Uint8Array): Uint8Array;
  appliedKey(key: Uint8Array): Uint8Array;
  _db: { batch(ops: Array<{ type: 'put'; key: Uint8Array; value: Uint8Array }>): Promise<void> };
  _getDbKey(key: Uint8Array): Uint8Array;
  _lock: { acquire(): Promise<void>; release(): void };
  _opts: { useNodePruning?: boolean; useRootPersistence?: boolean };
  lookupNode(node: Uint8Array | Uint8Array[]): Promise<MPTNode>;
  persistRoot(): Promise<void>;
}

/** Thrown (and caught in putMany) when the trie holds a key of another length than the updates. */
const NOT_UNIFORM = new Error('the trie holds keys of another length');

const isFresh = (c: Child): c is Fresh => c !== null && !(c instanceof Uint8Array) && !Array.isArray(c);

function nibblesOf(bytes: Uint8Array): number[] {
  const out = new Array<number>(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = bytes[i]! >> 4;
    out[2 * i + 1] = bytes[i]! & 15;
  }
  return out;
}

/** Length of the common prefix of `a` and `b[from..]`. */
function sharedLength(a: readonly number[], b: readonly number[], from: number): number {
  let i = 0;
  while (i < a.length && from + i < b.length && a[i] === b[from + i]) i++;
  return i;
}

/** A subtrie of `updates` alone (sorted, distinct keys, all longer than `depth`). */
function build(updates: Update[], depth: number): Fresh {
  const first = updates[0]!;
  if (updates.length === 1) return { kind: 'leaf', key: first.key.slice(depth), value: first.value };
  const last = updates[updates.length - 1]!;
  const p = sharedLength(first.key.slice(depth), last.key, depth);
  const children: Child[] = new Array<Child>(16).fill(null);
  for (const [nibble, group] of groups(updates, depth + p)) children[nibble] = build(group, depth + p + 1);
  const branch: Fresh = { kind: 'branch', children, value: null };
  return p > 0 ? { kind: 'ext', key: first.key.slice(depth, depth + p), child: branch } : branch;
}

/** Sorted updates split by their nibble at `at` (each group still sorted). */
function groups(updates: Update[], at: number): Array<[number, Update[]]> {
  const out: Array<[number, Update[]]> = [];
  for (const u of updates) {
    const n = u.key[at]!;
    const lastGroup = out[out.length - 1];
    if (lastGroup && lastGroup[0] === n) lastGroup[1].push(u);
    else out.push([n, [u]]);
  }
  return out;
}

/**
 * The nodes each trie's last update wrote, by hash (hex), as `#load` gives them (children as refs).
 * The next update walks down the same upper branches (the root and the branches above the changed
 * accounts), and reading one back costs a database read and an RLP decode (a block of one transfer
 * reads several nodes the block before it wrote). Test: trie-batch.test.ts "an update reads back
 * none of the nodes the one before it wrote". A node is stored
 * under its hash, so an entry stays true whatever the trie does meanwhile (a revert, another root).
 */
const lastWritten = new WeakMap<object, Map<string, Fresh>>();

class Batch {
  /** What this update writes, for the next one (see lastWritten). */
  readonly written = new Map<string, Fresh>();
  readonly #recent: Map<string, Fresh> | undefined;

  constructor(private readonly trie: Trie) {
    this.#recent = lastWritten.get(trie);
  }

  /** `child` with `updates` (sorted, distinct, sharing the path to `depth`) merged in. */
  async insert(child: Child, updates: Update[], depth: number): Promise<Fresh> {
    if (child === null) return build(updates, depth);
    const node: Fresh = isFresh(child) ? child : await this.#load(child);
    switch (node.kind) {
      case 'branch': {
        if (node.value !== null || depth >= updates[0]!.key.length) throw NOT_UNIFORM;
        const children = node.children.slice();
        for (const [nibble, group] of groups(updates, depth)) children[nibble] = await this.insert(children[nibble]!, group, depth + 1);
        return { kind: 'branch', children, value: node.value };
      }
      case 'leaf': {
        // The leaf becomes one more update, unless an update replaces its value.
        const full = [...updates[0]!.key.slice(0, depth), ...node.key];
        if (full.length !== updates[0]!.key.length) throw NOT_UNIFORM;
        const all = updates.some((u) => sharedLength(full, u.key, 0) === full.length)
          ? updates
          : [...updates, { key: full, value: node.value }].sort((a, b) => compareNibbles(a.key, b.key));
        return build(all, depth);
      }
      case 'ext': {
        if (depth + node.key.length >= updates[0]!.key.length) throw NOT_UNIFORM;
        let p = node.key.length;
        for (const u of updates) p = Math.min(p, sharedLength(node.key, u.key, depth));
        if (p === node.key.length) return { kind: 'ext', key: node.key, child: await this.insert(node.child, updates, depth + p) };
        // Split at p: a branch there holds the rest of the extension and the updates.
        const children: Child[] = new Array<Child>(16).fill(null);
        const rest = node.key.slice(p + 1);
        children[node.key[p]!] = rest.length > 0 ? { kind: 'ext', key: rest, child: node.child } : node.child;
        const branch = await this.insert({ kind: 'branch', children, value: null }, updates, depth + p);
        return p > 0 ? { kind: 'ext', key: node.key.slice(0, p), child: branch } : branch;
      }
    }
  }

  async #load(ref: Uint8Array | Uint8Array[]): Promise<Fresh> {
    const known = this.#recent !== undefined && ref instanceof Uint8Array ? this.#recent.get(toHex(ref)) : undefined;
    if (known) return known;
    const n = await this.trie.lookupNode(ref);
    if (n instanceof BranchMPTNode) {
      const children: Child[] = new Array<Child>(16);
      for (let i = 0; i < 16; i++) children[i] = n.getBranch(i) as Ref;
      const value = n.value();
      return { kind: 'branch', children, value: value && value.length > 0 ? value : null };
    }
    if (n instanceof LeafMPTNode) return { kind: 'leaf', key: n.key(), value: n.value() };
    return { kind: 'ext', key: n.key(), child: (n as ExtensionMPTNode).value() as Ref };
  }

  /** The ref of `node`, queueing the put of every encoded node of 32 bytes or more (and of the root). */
  encode(node: Child, ops: Array<{ type: 'put'; key: Uint8Array; value: Uint8Array }>, root: boolean): Ref {
    if (!isFresh(node)) return node;
    let made: MPTNode;
    // The node as #load gives it back: its children as refs.
    let loaded: Fresh = node;
    if (node.kind === 'leaf') made = new LeafMPTNode(node.key, node.value);
    else if (node.kind === 'ext') {
      const child = this.encode(node.child, ops, false);
      made = new ExtensionMPTNode(node.key, child as Uint8Array);
      loaded = { kind: 'ext', key: node.key, child };
    } else {
      const b = new BranchMPTNode();
      const children = new Array<Ref>(16);
      for (let i = 0; i < 16; i++) b.setBranch(i, (children[i] = this.encode(node.children[i]!, ops, false)) as Uint8Array);
      if (node.value) b.value(node.value);
      made = b;
      loaded = { kind: 'branch', children, value: node.value };
    }
    const encoded = made.serialize();
    if (encoded.length < 32 && !root) return made.raw() as Uint8Array[];
    const hash = this.trie.hash(encoded);
    ops.push({ type: 'put', key: this.trie._getDbKey(hash), value: encoded });
    this.written.set(toHex(hash), loaded);
    return hash;
  }
}

function compareNibbles(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

type Trie = Omit<MerklePatriciaTrie, 'hash' | 'appliedKey'> & TrieInternals;

const hasInternals = (trie: MerklePatriciaTrie): trie is MerklePatriciaTrie & Trie => {
  const t = trie as unknown as Partial<TrieInternals>;
  return typeof t._getDbKey === 'function' && typeof t.hash === 'function' && typeof t.appliedKey === 'function' && typeof t._db?.batch === 'function' && typeof t._lock?.acquire === 'function' && t._opts !== undefined;
};

/**
 * Puts each `[key, value]` (keys as `put` takes them: hashed here when the trie hashes keys) into
 * `trie` as one update; true when done. False, with the trie untouched, when the puts are not of
 * the kind done here (an empty value, which `put` treats as a delete; keys of different lengths;
 * a trie that prunes nodes); the caller then puts them one by one.
 */
export async function putMany(trie: MerklePatriciaTrie, entries: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): Promise<boolean> {
  if (!hasInternals(trie) || trie._opts.useNodePruning) return false;
  if (entries.length === 0) return true;
  const byKey = new Map<string, Update>();
  let length = -1;
  for (const [k, value] of entries) {
    if (value.length === 0) return false;
    const key = nibblesOf(trie.appliedKey(k));
    if (length !== -1 && key.length !== length) return false;
    length = key.length;
    byKey.set(key.join(','), { key, value });
  }
  if (length === 0) return false;
  const updates = [...byKey.values()].sort((a, b) => compareNibbles(a.key, b.key));
  await trie._lock.acquire();
  try {
    const batch = new Batch(trie);
    const root = trie.root();
    const start: Child = equalsBytes(root, trie.EMPTY_TRIE_ROOT) ? null : root;
    let top: Fresh;
    try {
      top = await batch.insert(start, updates, 0);
    } catch (e) {
      // Nothing is written before the end: the trie is as it was.
      if (e === NOT_UNIFORM) return false;
      throw e;
    }
    const ops: Array<{ type: 'put'; key: Uint8Array; value: Uint8Array }> = [];
    const newRoot = batch.encode(top, ops, true) as Uint8Array;
    await trie._db.batch(ops);
    trie.root(newRoot);
    await trie.persistRoot();
    lastWritten.set(trie, batch.written);
    return true;
  } finally {
    trie._lock.release();
  }
}
