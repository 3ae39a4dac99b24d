/**
 * The root of a block's transactions or receipts trie (keys RLP(index), values the encodings) in one
 * pass over the keys, each node encoded and hashed once — what geth's DeriveSha does with its stack
 * trie. Building an @ethereumjs MerklePatriciaTrie instead re-hashes the path to the root on every
 * put, for every tx of a block, twice. Test: trie-root.test.ts.
 */
import { RLP, type Input } from '@ethereumjs/rlp';
import { KECCAK256_RLP } from '@ethereumjs/util';

type Hash = (data: Uint8Array) => Uint8Array;

/** A node as RLP input: a leaf/extension pair or a 17-item branch. */
type RawNode = Input[];

interface Entry {
  readonly nibbles: Uint8Array;
  readonly value: Uint8Array;
}

const EMPTY = new Uint8Array();

function nibblesOf(key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    out[2 * i] = key[i]! >> 4;
    out[2 * i + 1] = key[i]! & 15;
  }
  return out;
}

/** Hex-prefix encoding of a nibble path (Yellow Paper appendix C): flag 2 for a leaf, +1 when odd. */
function hexPrefix(nibbles: Uint8Array, from: number, to: number, leaf: boolean): Uint8Array {
  const len = to - from;
  const odd = len % 2 === 1;
  const out = new Uint8Array(1 + (len >> 1));
  const flag = (leaf ? 2 : 0) + (odd ? 1 : 0);
  let i = from;
  if (odd) out[0] = (flag << 4) | nibbles[i++]!;
  else out[0] = flag << 4;
  for (let o = 1; i < to; i += 2, o++) out[o] = (nibbles[i]! << 4) | nibbles[i + 1]!;
  return out;
}

/** How a parent refers to a child: the node itself when its encoding is under 32 bytes, else its hash. */
function ref(node: RawNode, hash: Hash): Input {
  const enc = RLP.encode(node);
  return enc.length < 32 ? node : hash(enc);
}

/** The node holding `entries[lo, hi)` (sorted by nibbles, distinct keys), all sharing the first `depth` nibbles. */
function build(entries: readonly Entry[], lo: number, hi: number, depth: number, hash: Hash): RawNode {
  const first = entries[lo]!;
  if (hi - lo === 1) return [hexPrefix(first.nibbles, depth, first.nibbles.length, true), first.value];
  // Common prefix of the sorted run: that of its first and last keys.
  const last = entries[hi - 1]!;
  let common = depth;
  while (common < first.nibbles.length && common < last.nibbles.length && first.nibbles[common] === last.nibbles[common]) common++;
  if (common > depth) {
    return [hexPrefix(first.nibbles, depth, common, false), ref(build(entries, lo, hi, common, hash), hash)];
  }
  const branch: Input[] = new Array<Input>(17).fill(EMPTY);
  let i = lo;
  if (first.nibbles.length === depth) {
    branch[16] = first.value;
    i++;
  }
  while (i < hi) {
    const nib = entries[i]!.nibbles[depth]!;
    let j = i + 1;
    while (j < hi && entries[j]!.nibbles[depth] === nib) j++;
    branch[nib] = ref(build(entries, i, j, depth + 1, hash), hash);
    i = j;
  }
  return branch;
}

function compareNibbles(a: Entry, b: Entry): number {
  const n = Math.min(a.nibbles.length, b.nibbles.length);
  for (let i = 0; i < n; i++) if (a.nibbles[i] !== b.nibbles[i]) return a.nibbles[i]! - b.nibbles[i]!;
  return a.nibbles.length - b.nibbles.length;
}

/** The Merkle-Patricia root of `values[i]` stored at key RLP(i) (no key hashing): a block's tx or receipt root. */
export function orderedTrieRoot(values: readonly Uint8Array[], hash: Hash): Uint8Array {
  if (values.length === 0) return KECCAK256_RLP;
  const entries: Entry[] = values.map((value, i) => ({ nibbles: nibblesOf(RLP.encode(i)), value }));
  entries.sort(compareNibbles);
  return hash(RLP.encode(build(entries, 0, entries.length, 0, hash)));
}
