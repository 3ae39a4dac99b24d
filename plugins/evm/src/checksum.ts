/**
 * An address as geth's Address.Hex() writes it (EIP-55's mixed-case checksum): the txpool_ maps'
 * keys and the chain's texts that name an address ("nonce too high: address 0x…"). Apart from both
 * sides, on @noble only: the package root (which loads no @ethereumjs) reaches the mempool's module.
 * Test: rpc-txpool.test.ts "checksumAddress writes EIP-55".
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

export function checksumAddress(address: Uint8Array): string {
  let lower = '';
  for (const b of address) lower += b.toString(16).padStart(2, '0');
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const c = lower[i]!;
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}
