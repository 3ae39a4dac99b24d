/** Plain views (evm-backend.ts) of @ethereumjs blocks, txs and stored receipts. */
import type { Block } from '@ethereumjs/block';
import { Capability, type TypedTransaction } from '@ethereumjs/tx';
import { Bloom } from '@ethereumjs/vm';
import type { Common } from '@ethereumjs/common';
import type { AccessListEntry, BlockView, HeaderView, LogView, ReceiptView, TxView } from '../evm-backend.js';
import type { StoredReceipt } from './store.js';

/** `extra`: the chain rules' extra JSON fields (rules.ts headerJson). */
export function headerView(block: Block, size: number, extra?: Readonly<Record<string, unknown>>): HeaderView {
  const h = block.header;
  return {
    number: h.number,
    hash: block.hash(),
    parentHash: h.parentHash,
    timestamp: h.timestamp,
    stateRoot: h.stateRoot,
    transactionsRoot: h.transactionsTrie,
    receiptsRoot: h.receiptTrie,
    logsBloom: h.logsBloom,
    miner: h.coinbase.bytes,
    difficulty: h.difficulty,
    gasLimit: h.gasLimit,
    gasUsed: h.gasUsed,
    baseFeePerGas: h.baseFeePerGas ?? 0n,
    extraData: h.extraData,
    mixHash: h.mixHash,
    nonce: h.nonce,
    sha3Uncles: h.uncleHash,
    size: BigInt(size),
    ...(h.withdrawalsRoot ? { withdrawalsRoot: h.withdrawalsRoot } : {}),
    ...(h.blobGasUsed !== undefined ? { blobGasUsed: h.blobGasUsed } : {}),
    ...(h.excessBlobGas !== undefined ? { excessBlobGas: h.excessBlobGas } : {}),
    ...(h.parentBeaconBlockRoot ? { parentBeaconBlockRoot: h.parentBeaconBlockRoot } : {}),
    ...(extra ? { extra } : {}),
  };
}

/** The price a tx pays per gas in a block with `baseFee` (undefined: pending, the cap). */
export function effectiveGasPrice(tx: TypedTransaction, baseFee: bigint | undefined): bigint {
  if ('maxFeePerGas' in tx) {
    const t = tx as TypedTransaction & { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    if (baseFee === undefined) return t.maxFeePerGas;
    const tipped = baseFee + t.maxPriorityFeePerGas;
    return tipped < t.maxFeePerGas ? tipped : t.maxFeePerGas;
  }
  return (tx as TypedTransaction & { gasPrice: bigint }).gasPrice;
}

/** `hash`: given for a tx that has none of its own (an unsigned call of eth_simulateV1). */
export function txView(tx: TypedTransaction, baseFee?: bigint, hash: Uint8Array = tx.hash()): TxView {
  const typed = tx.type !== 0;
  const accessList: AccessListEntry[] | undefined =
    'accessList' in tx ? (tx.accessList as Array<[Uint8Array, Uint8Array[]]>).map(([address, storageKeys]) => ({ address, storageKeys })) : undefined;
  const chainId = typed || tx.supports(Capability.EIP155ReplayProtection) ? tx.common.chainId() : undefined;
  const base: TxView = {
    hash,
    type: tx.type,
    from: tx.getSenderAddress().bytes,
    to: tx.to ? tx.to.bytes : null,
    nonce: tx.nonce,
    value: tx.value,
    input: tx.data,
    gas: tx.gasLimit,
    gasPrice: effectiveGasPrice(tx, baseFee),
    v: tx.v ?? 0n,
    r: tx.r ?? 0n,
    s: tx.s ?? 0n,
    ...(chainId !== undefined ? { chainId } : {}),
    ...(accessList ? { accessList } : {}),
    ...(typed ? { yParity: Number(tx.v ?? 0n) } : {}),
  };
  if ('maxFeePerGas' in tx) {
    const t = tx as TypedTransaction & { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    return { ...base, maxFeePerGas: t.maxFeePerGas, maxPriorityFeePerGas: t.maxPriorityFeePerGas };
  }
  return base;
}

export function blockView(block: Block, size: number, extra?: Readonly<Record<string, unknown>>): BlockView {
  const baseFee = block.header.baseFeePerGas;
  return { header: headerView(block, size, extra), transactions: block.transactions.map((tx) => txView(tx, baseFee)) };
}

/** The receipts of a block, with their logs indexed across the block. */
export function receiptViews(block: Block, stored: readonly StoredReceipt[], common: Common): ReceiptView[] {
  const blockHash = block.hash();
  const blockNumber = block.header.number;
  const baseFee = block.header.baseFeePerGas;
  let logIndex = 0;
  return stored.map((r, i) => {
    const tx = block.transactions[i]!;
    const transactionHash = tx.hash();
    const bloom = new Bloom(undefined, common);
    const logs: LogView[] = r.logs.map(([address, topics, data]) => {
      bloom.add(address);
      for (const t of topics) bloom.add(t);
      return { address, topics, data, blockNumber, blockHash, transactionHash, transactionIndex: i, logIndex: logIndex++, removed: false };
    });
    return {
      transactionHash,
      transactionIndex: i,
      blockHash,
      blockNumber,
      from: tx.getSenderAddress().bytes,
      to: tx.to ? tx.to.bytes : null,
      cumulativeGasUsed: r.cumulativeGasUsed,
      gasUsed: r.gasUsed,
      effectiveGasPrice: effectiveGasPrice(tx, baseFee),
      contractAddress: r.contractAddress ?? null,
      logs,
      logsBloom: bloom.bitvector,
      status: r.status,
      type: tx.type,
    };
  });
}
