// Deterministic sender keys for evm-rpc-bench.mjs (--sender-seed): a chain's genesis can fund them
// and put them on its tx allow list before the harness runs.
import { Wallet, keccak256, toUtf8Bytes } from 'ethers';

/** The `count` sender wallets of `seed`: key i is keccak256("<seed>:<i>"). */
export function seededSenders(seed, count) {
  return Array.from({ length: count }, (_, i) => new Wallet(keccak256(toUtf8Bytes(`${seed}:${i}`))));
}
