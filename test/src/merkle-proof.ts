/**
 * A Merkle-Patricia proof verifier on ethers' keccak and RLP, as a light client checks eth_getProof
 * against a block's stateRoot: keccak of each node equals its reference, the walk follows the key's
 * nibbles through branch, extension and leaf nodes (a child under 32 bytes is embedded), and no node
 * is left over.
 */
import { decodeRlp, getBytes, keccak256, type RlpStructuredData } from 'ethers';

export const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

function nibbles(hex: string): number[] {
  return [...hex.slice(2)].map((c) => parseInt(c, 16));
}

/**
 * The value (0x hex) that `proof` proves under `root` for `key` (0x hex, hashed here), or null for a
 * proof of absence; throws when the proof does not hold.
 */
export function verifyMerkleProof(root: string, key: string, proof: readonly string[]): string | null {
  if (proof.length === 0) {
    if (root.toLowerCase() !== EMPTY_TRIE_ROOT) throw new Error('an empty proof for a non-empty trie');
    return null;
  }
  const path = nibbles(keccak256(key));
  let pos = 0;
  let used = 0;
  let want = root.toLowerCase();
  const done = (v: string | null): string | null => {
    if (used !== proof.length) throw new Error(`${proof.length - used} proof nodes left over`);
    return v;
  };
  for (;;) {
    const raw = proof[used++];
    if (raw === undefined) throw new Error('the proof ends before the path does');
    if (keccak256(raw) !== want) throw new Error(`node ${used - 1}: its keccak is not its reference`);
    let node: RlpStructuredData = decodeRlp(raw);
    for (;;) {
      if (!Array.isArray(node)) throw new Error('a trie node is an RLP list');
      let child: RlpStructuredData;
      if (node.length === 17) {
        if (pos === path.length) return done(node[16] === '0x' ? null : (node[16] as string));
        child = node[path[pos++]!]!;
      } else if (node.length === 2) {
        const compact = nibbles(node[0] as string);
        const flag = compact[0]!;
        const part = compact.slice(flag & 1 ? 1 : 2);
        const matches = part.every((n, i) => path[pos + i] === n);
        if (flag >= 2) return done(matches && pos + part.length === path.length ? (node[1] as string) : null);
        if (!matches) return done(null);
        pos += part.length;
        child = node[1]!;
      } else {
        throw new Error(`a trie node of ${node.length} items`);
      }
      if (Array.isArray(child)) {
        node = child;
        continue;
      }
      if (child === '0x') return done(null);
      if (getBytes(child).length !== 32) throw new Error('a child reference is a 32-byte hash or an embedded node');
      want = child;
      break;
    }
  }
}
