/**
 * Tx admission: a signed tx, sent to this node or gossiped by another, checked and pooled. The
 * checks run in this order, with geth's texts (the size, the type, the RLP's shape (tx-rlp.ts), the
 * chain ID and replay protection, decoding, the block gas limit, the fee cap against the tip, the
 * sender, the intrinsic gas, the base fee of the next block, the chain rules' checkTx, the nonce, the
 * funds), then the mempool's bounds (mempool.ts). An executable tx is gossiped (`onAdmitted`, when
 * it was not gossiped to us) and announced to newPendingTransactions; future txs it makes executable
 * are both.
 */
import { toHex, type Logger } from '@cornice/sdk';
import type { Common } from '@ethereumjs/common';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Address, bytesToBigInt } from '@ethereumjs/util';
import type { Subject } from 'rxjs';
import type { Hash, TxView } from '../evm-backend.js';
import type { EvmBlock } from '../block.js';
import { rpcErr, shortReason } from './eth-errors.js';
import { freezeWithSender, supportedTxType } from './executor.js';
import { hookState } from './hooks.js';
import { txRlpError } from './tx-rlp.js';
import { decodeRawTx, rawTxFields, TIP_ABOVE_FEE_CAP, valueRefusal, type RawTxFields } from './tx-decode.js';
import { txFeeRefusal } from './tx-fee-cap.js';
import type { Mempool } from './mempool.js';
import type { StateReader } from './reader.js';
import type { BlockInfo, ChainRules, HeaderFields } from './rules.js';
import { txView } from './views.js';

/** What admission reads of the chain (EvmChain). */
export interface AdmissionHost {
  readonly chainId: bigint;
  /** The Common txs are decoded with. */
  readonly txCommon: Common;
  readonly rules: ChainRules | undefined;
  readonly lastAccepted: EvmBlock;
  readonly mempool: Mempool;
  readonly reader: StateReader;
  readonly pending$: Subject<TxView>;
  readonly log: Logger;
  nextHeader(): Promise<{ readonly fields: HeaderFields; readonly info: BlockInfo }>;
  nextBaseFee(): Promise<bigint>;
  /** Something may be executable now. */
  wake(): void;
}

/** The chain options admission reads (EvmChainOptions). */
export interface AdmissionOptions {
  /** Largest raw tx admitted, bytes (default 128 KiB, as geth). */
  readonly maxTxBytes?: number;
  /** Admit legacy txs without EIP-155 replay protection (default false, as coreth). */
  readonly allowUnprotectedTxs?: boolean;
  /**
   * Most fee (gas × fee cap, in whole native units) a tx sent or signed through the RPC may offer
   * (default 100, as coreth's rpc-tx-fee-cap; 0: no bound). Gossiped txs are not bounded by it.
   */
  readonly rpcTxFeeCap?: number;
}

/** Default of AdmissionOptions.rpcTxFeeCap (coreth's). */
export const DEFAULT_RPC_TX_FEE_CAP = 100;

export class TxAdmission {
  /**
   * Called with the raw bytes of each tx to gossip (the VM gossips them): an executable tx admitted
   * through the RPC, and future txs an admission made executable (whichever way the filler came).
   * Future txs are not gossiped while their gap is open, as geth and coreth announce only executable
   * ones: a gapped flood stays on the node it was sent to.
   */
  onAdmitted: ((raw: Uint8Array) => void) | undefined;
  readonly #chain: AdmissionHost;
  readonly #opts: AdmissionOptions;

  constructor(chain: AdmissionHost, opts: AdmissionOptions) {
    this.#chain = chain;
    this.#opts = opts;
  }

  /**
   * Txs that became executable (a filled gap, or an accepted block: EvmChain's accept): gossiped, and
   * sent to newPendingTransactions subscribers (as geth).
   */
  announce(txs: readonly TypedTransaction[]): void {
    for (const tx of txs) this.onAdmitted?.(tx.serialize());
    if (!this.#chain.pending$.observed) return;
    try {
      for (const tx of txs) this.#chain.pending$.next(txView(tx));
    } catch (e) {
      this.#chain.log.warn('pending tx subscriber failed', { error: (e as Error).message });
    }
  }

  /** A raw tx sent to this node (eth_sendRawTransaction): gossiped once it is executable. */
  sendRaw(raw: Uint8Array): Promise<Hash> {
    return this.#admitRaw(raw, true);
  }

  /**
   * A tx another node gossiped: admitted through the same path and pool bounds as one sent here, and
   * not gossiped again (future txs it makes executable are).
   */
  admitGossiped(raw: Uint8Array): Promise<Hash> {
    return this.#admitRaw(raw, false);
  }

  /** `gossip`: sent to this node through the RPC (gossiped once executable, bounded by the fee cap). */
  async #admitRaw(raw: Uint8Array, gossip: boolean): Promise<Hash> {
    const max = this.#opts.maxTxBytes ?? 128 * 1024;
    if (raw.length > max) throw rpcErr(`oversized data: transaction size ${raw.length}, limit ${max}`);
    // A first byte up to 0x7f is an EIP-2718 type; above, the RLP list of a legacy tx.
    const typed = raw.length === 0 || raw[0]! <= 0x7f;
    if (typed && raw.length <= 1) throw rpcErr('typed transaction too short');
    if (typed && raw[0] !== 1 && raw[0] !== 2) throw rpcErr('transaction type not supported');
    const malformed = typed ? txRlpError(raw[0]!, raw.subarray(1)) : txRlpError(0, raw);
    if (malformed !== undefined) throw rpcErr(malformed);
    const fields = rawTxFields(raw);
    if (gossip) this.#checkFee(fields.feeCap, fields.gas);
    this.#checkChainId(fields);
    const refused = valueRefusal(fields, this.#chain.lastAccepted.eth.header.gasLimit);
    if (refused !== undefined) throw rpcErr(refused);
    let tx: TypedTransaction;
    try {
      // Unfrozen: admission freezes it once its sender is known (freezeWithSender).
      tx = decodeRawTx(raw, fields, this.#chain.txCommon);
    } catch (e) {
      // The RLP has its type's shape and its values passed geth's bounds: what is left is a signature @ethereumjs refuses.
      const reason = shortReason(e);
      throw rpcErr(/signature|[vrs]-value|yParity|y-parity|v = 27\/28/i.test(reason) ? 'invalid sender' : `invalid transaction: ${reason}`);
    }
    return this.#admit(tx, raw, gossip);
  }

  /** geth's bound on what a tx sent through the RPC may pay (coreth's rpc-tx-fee-cap). */
  #checkFee(feeCap: bigint, gas: bigint): void {
    const refused = txFeeRefusal(feeCap, gas, this.#opts.rpcTxFeeCap ?? DEFAULT_RPC_TX_FEE_CAP);
    if (refused !== undefined) throw rpcErr(refused);
  }

  /** The chain ID a raw tx is signed for, checked before decoding (a mismatch would be a vaguer decode error). */
  #checkChainId(f: RawTxFields): void {
    let chainId: bigint | undefined;
    if (f.type === 0) {
      const v = bytesToBigInt(f.items[6] ?? new Uint8Array());
      // geth: v 0, 1, 27 or 28 is not replay-protected; any other is, for the chain (v - 35) / 2 in
      // uint64 arithmetic (v 30: 2^63 - 3, never this chain).
      if (v === 27n || v === 28n || v === 0n || v === 1n) {
        if (!this.#opts.allowUnprotectedTxs) throw rpcErr('only replay-protected (EIP-155) transactions allowed over RPC');
        return;
      }
      chainId = (v >= 35n ? v - 35n : (v - 35n + (1n << 64n)) % (1n << 64n)) / 2n;
    } else {
      chainId = bytesToBigInt(f.items[0] ?? new Uint8Array());
    }
    if (chainId !== undefined && chainId !== this.#chain.chainId) throw rpcErr(`invalid chain id for signer: have ${chainId} want ${this.#chain.chainId}`);
  }

  /** A tx signed here (personal_sendTransaction, eth_sendTransaction): gossiped once it is executable. */
  sendSigned(tx: TypedTransaction): Promise<Hash> {
    this.#checkFee(feeCapOf(tx), tx.gasLimit);
    return this.#admit(tx, undefined, true);
  }

  /** Refuses a tx signed here for eth_signTransaction that pays past the RPC fee cap, as geth does before signing. */
  checkSignedFee(tx: TypedTransaction): void {
    this.#checkFee(feeCapOf(tx), tx.gasLimit);
  }

  /** Admission of a decoded tx (`raw`: the bytes it was decoded from): the pool's and the state's checks with Ethereum's texts. Not gossiped. */
  admit(tx: TypedTransaction, raw?: Uint8Array): Promise<Hash> {
    return this.#admit(tx, raw, false);
  }

  async #admit(tx: TypedTransaction, raw: Uint8Array | undefined, gossip: boolean): Promise<Hash> {
    if (!supportedTxType(tx)) throw rpcErr('transaction type not supported');
    const gasLimit = this.#chain.lastAccepted.eth.header.gasLimit;
    if (tx.gasLimit > gasLimit) throw rpcErr('exceeds block gas limit');
    const feeCap = feeCapOf(tx);
    const tip = 'maxPriorityFeePerGas' in tx ? (tx as { maxPriorityFeePerGas: bigint }).maxPriorityFeePerGas : feeCap;
    if (tip > feeCap) throw rpcErr(TIP_ABOVE_FEE_CAP);
    let sender: Uint8Array;
    try {
      sender = freezeWithSender(tx, raw).bytes;
    } catch {
      throw rpcErr('invalid sender');
    }
    const intrinsic = tx.getIntrinsicGas();
    if (tx.gasLimit < intrinsic) throw rpcErr(`intrinsic gas too low: gas ${tx.gasLimit}, minimum needed ${intrinsic}`);
    const senderKey = toHex(sender);
    const rules = this.#chain.rules;
    const next = rules?.header || rules?.checkTx ? await this.#chain.nextHeader() : undefined;
    const baseFee = next ? next.fields.baseFeePerGas : await this.#chain.nextBaseFee();
    if (feeCap < baseFee) throw rpcErr(`max fee per gas less than block base fee: address 0x${senderKey}, maxFeePerGas: ${feeCap}, baseFee: ${baseFee}`);
    let refused: string | undefined;
    const root = this.#chain.lastAccepted.eth.header.stateRoot;
    const acct = await this.#chain.reader.at(root, async ({ sm }) => {
      if (rules?.checkTx) refused = await rules.checkTx(sender, next!.info, hookState(sm, undefined, root));
      return refused === undefined ? sm.getAccount(new Address(sender)) : undefined;
    });
    if (refused !== undefined) throw rpcErr(refused);
    const stateNonce = acct?.nonce ?? 0n;
    if (tx.nonce < stateNonce) throw rpcErr(`nonce too low: next nonce ${stateNonce}, tx nonce ${tx.nonce}`);
    const cost = tx.gasLimit * feeCap + tx.value;
    const have = acct?.balance ?? 0n;
    if (have < cost) throw rpcErr(`insufficient funds for gas * price + value: balance ${have}, tx cost ${cost}, overshot ${cost - have}`);
    const hash = tx.hash();
    const hashKey = toHex(hash);
    const size = raw?.length ?? tx.serialize().length;
    const { executable, promoted } = this.#chain.mempool.add({ tx, hash, hashKey, sender, senderKey, nonce: tx.nonce, feeCap, tip, size }, stateNonce, baseFee);
    this.#chain.wake();
    if (!executable) return hash;
    if (gossip) this.onAdmitted?.(raw ?? tx.serialize());
    // newPendingTransactions, as geth: txs as they become executable (a future tx when its gap fills).
    if (this.#chain.pending$.observed) {
      try {
        this.#chain.pending$.next(txView(tx));
      } catch (e) {
        this.#chain.log.warn('pending tx subscriber failed', { error: (e as Error).message });
      }
    }
    if (promoted.length > 0) this.announce(promoted.map((p) => p.tx));
    return hash;
  }
}

/** A tx's fee cap: maxFeePerGas, or a legacy / EIP-2930 gasPrice. */
function feeCapOf(tx: TypedTransaction): bigint {
  return 'maxFeePerGas' in tx ? (tx as { maxFeePerGas: bigint }).maxFeePerGas : (tx as { gasPrice: bigint }).gasPrice;
}
