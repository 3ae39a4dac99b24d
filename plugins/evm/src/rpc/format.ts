/**
 * JSON shapes of blocks, headers, transactions, receipts and logs as geth/coreth write them (the
 * fields ethers v6, viem and hardhat read). Addresses and hashes are lower-case 0x-hex.
 */
import type { AccessListEntry, BlockView, HeaderView, LogView, ReceiptView, TxView } from '../evm-backend.js';
import { hexData, quantity } from './hex.js';

export type Json = Record<string, unknown>;

/** geth's RPCMarshalHeader. */
export function headerJson(h: HeaderView): Json {
  const o: Json = {
    number: quantity(h.number),
    hash: hexData(h.hash),
    parentHash: hexData(h.parentHash),
    nonce: hexData(h.nonce),
    mixHash: hexData(h.mixHash),
    sha3Uncles: hexData(h.sha3Uncles),
    logsBloom: hexData(h.logsBloom),
    stateRoot: hexData(h.stateRoot),
    miner: hexData(h.miner),
    difficulty: quantity(h.difficulty),
    extraData: hexData(h.extraData),
    gasLimit: quantity(h.gasLimit),
    gasUsed: quantity(h.gasUsed),
    timestamp: quantity(h.timestamp),
    transactionsRoot: hexData(h.transactionsRoot),
    receiptsRoot: hexData(h.receiptsRoot),
    baseFeePerGas: quantity(h.baseFeePerGas),
  };
  if (h.withdrawalsRoot !== undefined) o.withdrawalsRoot = hexData(h.withdrawalsRoot);
  if (h.blobGasUsed !== undefined) o.blobGasUsed = quantity(h.blobGasUsed);
  if (h.excessBlobGas !== undefined) o.excessBlobGas = quantity(h.excessBlobGas);
  if (h.parentBeaconBlockRoot !== undefined) o.parentBeaconBlockRoot = hexData(h.parentBeaconBlockRoot);
  if (h.extra !== undefined) Object.assign(o, h.extra);
  return o;
}

/** geth's RPCMarshalBlock: the header, size, transactions (hashes or full objects), uncles. */
export function blockJson(b: BlockView, fullTx: boolean): Json {
  const o = headerJson(b.header);
  o.size = quantity(b.header.size);
  const txs = b.transactions;
  const list: unknown[] = new Array(txs.length);
  if (fullTx) {
    const { hash, number, timestamp } = b.header;
    for (let i = 0; i < txs.length; i++) list[i] = txJson(txs[i]!, hash, number, i, timestamp);
  } else {
    for (let i = 0; i < txs.length; i++) list[i] = hexData(txs[i]!.hash);
  }
  o.transactions = list;
  o.uncles = [];
  if (b.header.withdrawalsRoot !== undefined) o.withdrawals = [];
  return o;
}

function accessListJson(list: readonly AccessListEntry[] | undefined): unknown[] {
  if (!list) return [];
  return list.map((e) => ({ address: hexData(e.address), storageKeys: e.storageKeys.map(hexData) }));
}

/**
 * geth's RPCTransaction; a pending one has null blockHash, blockNumber, blockTimestamp (the block's
 * timestamp, which the execution API requires of a mined tx) and transactionIndex.
 */
export function txJson(t: TxView, blockHash?: Uint8Array, blockNumber?: bigint, index?: number, blockTimestamp?: bigint): Json {
  const o: Json = {
    blockHash: blockHash ? hexData(blockHash) : null,
    blockNumber: blockNumber === undefined ? null : quantity(blockNumber),
    blockTimestamp: blockTimestamp === undefined ? null : quantity(blockTimestamp),
    from: hexData(t.from),
    gas: quantity(t.gas),
    gasPrice: quantity(t.gasPrice),
  };
  if (t.type === 2) {
    o.maxFeePerGas = quantity(t.maxFeePerGas ?? t.gasPrice);
    o.maxPriorityFeePerGas = quantity(t.maxPriorityFeePerGas ?? 0n);
  }
  o.hash = hexData(t.hash);
  o.input = hexData(t.input);
  o.nonce = quantity(t.nonce);
  o.to = t.to ? hexData(t.to) : null;
  o.transactionIndex = index === undefined ? null : quantity(index);
  o.value = quantity(t.value);
  o.type = quantity(t.type);
  if (t.type !== 0) o.accessList = accessListJson(t.accessList);
  if (t.chainId !== undefined) o.chainId = quantity(t.chainId);
  o.v = quantity(t.v);
  o.r = quantity(t.r);
  o.s = quantity(t.s);
  if (t.type !== 0) o.yParity = quantity(t.yParity ?? Number(t.v & 1n));
  return o;
}

export function logJson(l: LogView): Json {
  return {
    address: hexData(l.address),
    topics: l.topics.map(hexData),
    data: hexData(l.data),
    blockNumber: quantity(l.blockNumber),
    transactionHash: hexData(l.transactionHash),
    transactionIndex: quantity(l.transactionIndex),
    blockHash: hexData(l.blockHash),
    logIndex: quantity(l.logIndex),
    removed: l.removed,
  };
}

/**
 * `JSON.stringify(logJson(l))`, written directly (every field is hex, a number's hex or a boolean:
 * nothing to escape): half the garbage of the object and its text, for replies of 10,000 logs and
 * notifications (test: rpc-limits.test.ts "logText is logJson's text").
 */
export function logText(l: LogView): string {
  let topics = '';
  for (let i = 0; i < l.topics.length; i++) topics += (i === 0 ? '"' : ',"') + hexData(l.topics[i]!) + '"';
  return (
    '{"address":"' +
    hexData(l.address) +
    '","topics":[' +
    topics +
    '],"data":"' +
    hexData(l.data) +
    '","blockNumber":"' +
    quantity(l.blockNumber) +
    '","transactionHash":"' +
    hexData(l.transactionHash) +
    '","transactionIndex":"' +
    quantity(l.transactionIndex) +
    '","blockHash":"' +
    hexData(l.blockHash) +
    '","logIndex":"' +
    quantity(l.logIndex) +
    '","removed":' +
    (l.removed ? 'true' : 'false') +
    '}'
  );
}

export function logsJson(logs: readonly LogView[]): Json[] {
  const out: Json[] = new Array(logs.length);
  for (let i = 0; i < logs.length; i++) out[i] = logJson(logs[i]!);
  return out;
}

/** geth's receipt object (with effectiveGasPrice and type). */
export function receiptJson(r: ReceiptView): Json {
  return {
    blockHash: hexData(r.blockHash),
    blockNumber: quantity(r.blockNumber),
    contractAddress: r.contractAddress ? hexData(r.contractAddress) : null,
    cumulativeGasUsed: quantity(r.cumulativeGasUsed),
    effectiveGasPrice: quantity(r.effectiveGasPrice),
    from: hexData(r.from),
    gasUsed: quantity(r.gasUsed),
    logs: logsJson(r.logs),
    logsBloom: hexData(r.logsBloom),
    status: quantity(r.status),
    to: r.to ? hexData(r.to) : null,
    transactionHash: hexData(r.transactionHash),
    transactionIndex: quantity(r.transactionIndex),
    type: quantity(r.type),
  };
}
