/**
 * The block a call runs in, with geth's block overrides applied (eth_call, eth_estimateGas,
 * eth_simulateV1): a header-only block the EVM reads NUMBER, TIMESTAMP, COINBASE, GASLIMIT,
 * BASEFEE, PREVRANDAO and BLOBBASEFEE from. A stored block is never changed.
 */
import { createBlock, type Block, type BlockHeader, type HeaderData } from '@ethereumjs/block';
import type { BlockOverrides } from '../evm-backend.js';

/** Options of the blocks the chain makes (Executor.blockOpts). */
export interface BlockOpts {
  readonly common: BlockHeader['common'];
  readonly skipConsensusFormatValidation?: boolean;
}

/** The fields of `h` as header data (everything but the hash, which follows from them). */
export function headerData(h: BlockHeader): HeaderData {
  return {
    parentHash: h.parentHash,
    uncleHash: h.uncleHash,
    coinbase: h.coinbase,
    stateRoot: h.stateRoot,
    transactionsTrie: h.transactionsTrie,
    receiptTrie: h.receiptTrie,
    logsBloom: h.logsBloom,
    difficulty: h.difficulty,
    number: h.number,
    gasLimit: h.gasLimit,
    gasUsed: h.gasUsed,
    timestamp: h.timestamp,
    extraData: h.extraData,
    mixHash: h.mixHash,
    nonce: h.nonce,
    baseFeePerGas: h.baseFeePerGas,
    withdrawalsRoot: h.withdrawalsRoot,
    blobGasUsed: h.blobGasUsed,
    excessBlobGas: h.excessBlobGas,
    parentBeaconBlockRoot: h.parentBeaconBlockRoot,
  };
}

/** `data` with the overrides' header fields in place (blobBaseFee has no header field: see contextBlock). */
export function overriddenHeaderData(data: HeaderData, o: BlockOverrides): HeaderData {
  return {
    ...data,
    ...(o.number !== undefined && { number: o.number }),
    ...(o.difficulty !== undefined && { difficulty: o.difficulty }),
    ...(o.time !== undefined && { timestamp: o.time }),
    ...(o.gasLimit !== undefined && { gasLimit: o.gasLimit }),
    ...(o.feeRecipient !== undefined && { coinbase: o.feeRecipient }),
    ...(o.prevRandao !== undefined && { mixHash: o.prevRandao }),
    ...(o.baseFeePerGas !== undefined && { baseFeePerGas: o.baseFeePerGas }),
    ...(o.beaconRoot !== undefined && { parentBeaconBlockRoot: o.beaconRoot }),
  };
}

/**
 * A header-only block of `data` for the EVM to run in. The consensus format checks are off: an
 * overridden difficulty is no proof-of-stake header, yet geth runs a call in it. A `blobBaseFee`
 * replaces the one the header's excess blob gas gives (what BLOBBASEFEE answers).
 */
export function contextBlock(data: HeaderData, opts: BlockOpts, blobBaseFee?: bigint): Block {
  const block = createBlock({ header: data }, { ...opts, skipConsensusFormatValidation: true, freeze: false });
  if (blobBaseFee !== undefined) (block.header as { getBlobGasPrice: () => bigint }).getBlobGasPrice = () => blobBaseFee;
  return block;
}

/** `block` as the EVM sees it under `o` (the block itself when there are none). */
export function overriddenBlock(block: Block, o: BlockOverrides | undefined, opts: BlockOpts): Block {
  if (!o || Object.keys(o).length === 0) return block;
  return contextBlock(overriddenHeaderData(headerData(block.header), o), opts, o.blobBaseFee);
}
