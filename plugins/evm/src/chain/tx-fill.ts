/**
 * Txs the node builds from a request (eth_sendTransaction, eth_signTransaction, eth_fillTransaction):
 * built, signed, and the view of an unsigned one (geth's unsigned tx: v, r, s zero, its hash that of
 * its encoding with them). Tests: chain.test.ts "eth_fillTransaction / eth_signTransaction".
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { Common } from '@ethereumjs/common';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { bytesToBigInt } from '@ethereumjs/util';
import type { Address, TxView } from '../evm-backend.js';
import { keccak256 } from './crypto.js';
import { rpcErr, shortReason } from './eth-errors.js';
import { txValueError } from './tx-decode.js';
import { txView } from './views.js';

const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * A tx from its fields, unsigned and unfrozen. geth builds one whose gas × fee cap passes 2^256-1
 * (its fee cap refuses it when sent or signed); @ethereumjs refuses it, so it is built with gas 0 and
 * given its gas back.
 */
export function buildTx(data: Record<string, unknown> & { gasLimit: bigint }, common: Common): TypedTransaction {
  const price = (data.maxFeePerGas ?? data.gasPrice ?? 0n) as bigint;
  const overflow = data.gasLimit * price > MAX_UINT256;
  let tx: TypedTransaction;
  try {
    tx = createTx({ ...data, ...(overflow ? { gasLimit: 0n } : {}) } as never, { common, freeze: false }) as TypedTransaction;
  } catch (e) {
    throw rpcErr(txValueError(e) ?? `invalid transaction: ${shortReason(e)}`);
  }
  if (overflow) Object.assign(tx, { gasLimit: data.gasLimit });
  return tx;
}

/**
 * `tx` signed with `privateKey`. One whose gas × fee cap passes 2^256-1 (buildTx) is signed here:
 * @ethereumjs's sign builds a new tx, which its constructor refuses; such a tx then meets geth's
 * checks (the RPC fee cap, else "insufficient funds …").
 */
export function signWith(tx: TypedTransaction, privateKey: Uint8Array): TypedTransaction {
  const price = 'maxFeePerGas' in tx ? (tx as { maxFeePerGas: bigint }).maxFeePerGas : (tx as { gasPrice: bigint }).gasPrice;
  try {
    if (tx.gasLimit * price > MAX_UINT256) {
      const rec = secp256k1.sign(tx.getHashedMessageToSign(), privateKey, { prehash: false, lowS: true, format: 'recovered' });
      const recovery = BigInt(rec[0]!);
      const v = tx.type === 0 ? recovery + 35n + 2n * tx.common.chainId() : recovery;
      return Object.assign(tx, { v, r: bytesToBigInt(rec.subarray(1, 33)), s: bytesToBigInt(rec.subarray(33, 65)) });
    }
    return tx.sign(privateKey) as TypedTransaction;
  } catch (e) {
    throw rpcErr(`invalid transaction: ${shortReason(e)}`);
  }
}

/** The view of an unsigned tx from `from` encoded as `raw` (@ethereumjs gives neither hash nor sender of one). */
export function unsignedTxView(tx: TypedTransaction, from: Address, raw: Uint8Array): TxView {
  const signedLike = { hash: () => keccak256(raw), getSenderAddress: () => ({ bytes: from }) };
  const view = txView(Object.assign(Object.create(tx) as TypedTransaction, signedLike));
  // An unsigned legacy tx is not replay-protected (v = 0): geth writes no chainId for it.
  if (tx.type === 0) {
    const { chainId: _omit, ...rest } = view;
    return rest;
  }
  return view;
}
