/**
 * EIP-1186 proofs (eth_getProof) from the state trie at a block's root: the account's path in the
 * account trie and each slot's path in its storage trie, made by @ethereumjs/mpt's createMerkleProof.
 * Test: proof.test.ts (each proof checked by a verifier written there, and by @ethereumjs/mpt's).
 */
import { toHex } from '@cornice/sdk';
import { createMerkleProof, type MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { bytesToBigInt, equalsBytes, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util';
import { EvmRpcError, type AccountProofView, type Address, type Hash, type StopSignal, type StorageProofView } from '../../evm-backend.js';
import { accountOf } from './accounts.js';

const NO_PROOF: readonly Uint8Array[] = [];

/**
 * `trie`'s nodes on the path of `key`, root first, or why not: the node's store lacks one of them.
 * createMerkleProof stops quietly at a node the store lacks (a proof cut short that no verifier
 * takes), so the path is read first with a walk that throws there, which also gives the value.
 */
async function pathOf(trie: MerklePatriciaTrie, key: Uint8Array): Promise<{ value: Uint8Array | null; proof: Uint8Array[] }> {
  if (equalsBytes(trie.root(), KECCAK256_RLP)) return { value: null, proof: [] };
  let value: Uint8Array | null;
  try {
    value = await trie.get(key, true);
  } catch (e) {
    if (e instanceof Error && e.message === 'Missing node in DB') {
      throw new EvmRpcError(-32000, `missing trie node under root 0x${toHex(trie.root())}: this node does not hold that state`);
    }
    throw e;
  }
  // A node under 32 bytes is inside its parent's encoding, not a node of its own: it is left out,
  // as geth's proofs leave it out (only the root may be that short).
  const proof = (await createMerkleProof(trie, key)).filter((node, i) => i === 0 || node.length >= 32);
  return { value, proof };
}

/**
 * The proof of `address` and its `slots` in the account trie `stateTrie` (at a block's state root).
 * `signal` is looked at before each walk: a request whose client left stops between slots.
 */
export async function proveAccount(stateTrie: MerklePatriciaTrie, address: Address, slots: readonly Hash[], signal?: StopSignal): Promise<AccountProofView> {
  if (signal?.aborted) throw signal.reason;
  const account = await pathOf(stateTrie, address);
  if (account.value === null) {
    return {
      balance: 0n,
      nonce: 0n,
      codeHash: KECCAK256_NULL,
      storageHash: KECCAK256_RLP,
      accountProof: account.proof,
      storageProof: slots.map(() => ({ value: 0n, proof: NO_PROOF })),
    };
  }
  const { balance, nonce, codeHash, storageRoot } = accountOf(account.value);
  const storageTrie = stateTrie.shallowCopy(false);
  storageTrie.root(storageRoot);
  const storageProof: StorageProofView[] = [];
  for (const slot of slots) {
    if (signal?.aborted) throw signal.reason;
    const { value, proof } = await pathOf(storageTrie, slot);
    storageProof.push({ value: value === null ? 0n : bytesToBigInt(RLP.decode(value) as Uint8Array), proof });
  }
  return { balance, nonce, codeHash, storageHash: storageRoot, accountProof: account.proof, storageProof };
}
