/**
 * eth_getProof (EIP-1186): an account's and its storage slots' Merkle proofs at a block, as geth
 * answers them. Tests: rpc-proof.test.ts (params and format), chain's proof.test.ts (the proofs).
 */
import type { AccountProofView, Address, BlockRef, EvmBackend } from '../evm-backend.js';
import { required, type MethodSpec } from './dispatch.js';
import { ArgumentError, hexData, kindOf, parseAddress, parseBlockRef, quantity } from './hex.js';
import type { Lane } from './lanes.js';

/**
 * Most storage keys one eth_getProof may ask for. geth has no bound; each key is a walk of a storage
 * trie and a proof of up to ~10 nodes (~1 KB each) in the reply, so 1,024 keys are ~10 MB of reply
 * at worst, under the reply budget (API.md "Bounds").
 */
export const MAX_PROOF_KEYS = 1_024;

/** A storage key as asked and as it is echoed. */
export interface ProofKey {
  readonly slot: Uint8Array;
  /** geth's echo: a 32-byte key as 32-byte hex, a shorter one as a quantity ("0x01" → "0x1"). */
  readonly echo: string;
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/**
 * A storage key as geth reads eth_getProof's: hex of at most 32 bytes, the 0x prefix optional, an odd
 * number of digits taken with a leading 0, left-padded to 32 bytes; geth's texts.
 */
export function parseProofKey(v: unknown): ProofKey {
  if (typeof v !== 'string') throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into storage key`);
  let digits = v.startsWith('0x') || v.startsWith('0X') ? v.slice(2) : v;
  for (let i = 0; i < digits.length; i++) if (!isHexDigit(digits.charCodeAt(i))) throw new ArgumentError('hex string invalid');
  if (digits.length % 2 === 1) digits = '0' + digits;
  if (digits.length > 64) throw new ArgumentError('hex string too long, want at most 32 bytes');
  const full = digits.toLowerCase().padStart(64, '0');
  const slot = new Uint8Array(32);
  for (let i = 0; i < 32; i++) slot[i] = parseInt(full.slice(i * 2, i * 2 + 2), 16);
  return { slot, echo: digits.length === 64 ? '0x' + full : quantity(BigInt('0x' + full)) };
}

/** eth_getProof's second argument: an array of at most MAX_PROOF_KEYS storage keys. */
export function parseProofKeys(v: unknown): ProofKey[] {
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into storage key list`);
  if (v.length > MAX_PROOF_KEYS) throw new ArgumentError(`too many storage keys (${v.length}): at most ${MAX_PROOF_KEYS} per request`);
  return v.map((k, i) => {
    try {
      return parseProofKey(k);
    } catch (e) {
      if (e instanceof ArgumentError) throw new ArgumentError(`storage key ${i}: ${e.message}`);
      throw e;
    }
  });
}

/** The JSON of a proof, fields in the schema's (and geth's) order. */
export function proofJson(address: Address, keys: readonly ProofKey[], p: AccountProofView): unknown {
  return {
    address: hexData(address),
    accountProof: p.accountProof.map(hexData),
    balance: quantity(p.balance),
    codeHash: hexData(p.codeHash),
    nonce: quantity(p.nonce),
    storageHash: hexData(p.storageHash),
    storageProof: keys.map((k, i) => {
      const s = p.storageProof[i]!;
      return { key: k.echo, value: quantity(s.value), proof: s.proof.map(hexData) };
    }),
  };
}

/**
 * eth_getProof: `address, storageKeys, block` (block as eth_getBalance's: tag, number, hash or
 * EIP-1898 object). The trie walks run in `lane` (the scan lane: fair between clients, bounded
 * queues) with the request's signal, which stops them between slots.
 */
export function proofMethods(backend: EvmBackend, lane: Lane): Map<string, MethodSpec> {
  return new Map<string, MethodSpec>([
    [
      'eth_getProof',
      {
        args: [required(parseAddress), required(parseProofKeys), required(parseBlockRef)],
        async run(a, ctx) {
          const address = a[0] as Uint8Array;
          const keys = a[1] as ProofKey[];
          const proof = await lane.run(ctx.client, ctx.signal, () =>
            backend.proof(
              address,
              keys.map((k) => k.slot),
              a[2] as BlockRef,
              ctx.signal,
            ),
          );
          return proofJson(address, keys, proof);
        },
      },
    ],
  ]);
}
