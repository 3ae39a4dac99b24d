/**
 * The unsigned tx a call request runs as through runTx (eth_createAccessList, eth_simulateV1): an
 * EIP-1559 tx whose sender is the request's `from` (no signature: the sender is set, not recovered).
 * Its hash is that of its encoding with a zero signature, as geth hashes a simulated call's tx.
 */
import type { Common } from '@ethereumjs/common';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import type { Address } from '@ethereumjs/util';
import type { AccessListEntry, CallRequest } from '../evm-backend.js';
import { keccak256 } from './crypto.js';

export interface CallTxFields {
  readonly from: Address;
  readonly gas: bigint;
  readonly nonce: bigint;
  readonly chainId: bigint;
  readonly common: Common;
  /** In place of the request's. */
  readonly accessList?: readonly AccessListEntry[];
  /** No fees at all (eth_createAccessList, as geth runs it): else the request's (gasPrice stands for both caps). */
  readonly free?: boolean;
}

export function callTx(req: CallRequest, f: CallTxFields): TypedTransaction {
  const list = f.accessList ?? req.accessList ?? [];
  const data = {
    type: 2,
    chainId: f.chainId,
    nonce: f.nonce,
    gasLimit: f.gas,
    value: req.value ?? 0n,
    data: req.data ?? new Uint8Array(),
    maxFeePerGas: f.free ? 0n : (req.maxFeePerGas ?? req.gasPrice ?? 0n),
    maxPriorityFeePerGas: f.free ? 0n : (req.maxPriorityFeePerGas ?? req.gasPrice ?? 0n),
    accessList: list.map((e) => [e.address, [...e.storageKeys]]),
    ...(req.to ? { to: req.to } : {}),
  };
  const tx = createTx(data as never, { common: f.common, freeze: false }) as TypedTransaction;
  const from = f.from;
  (tx as { getSenderAddress: () => Address }).getSenderAddress = () => from;
  return tx;
}

/** The hash of an unsigned tx made by callTx (its encoding with a zero signature). */
export function callTxHash(tx: TypedTransaction): Uint8Array {
  return keccak256(tx.serialize());
}
