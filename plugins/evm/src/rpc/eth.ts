/**
 * The web3_, net_ and eth_ methods that read the chain or submit to it (filters, subscriptions and
 * node-held accounts live in filters.ts, subscriptions.ts and personal.ts).
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { EvmRpcError, type Address, type BlockOverrides, type BlockRef, type CallRequest, type CallResult, type EvmBackend, type StateOverrides } from '../evm-backend.js';
import { parseBlockOverrides } from './block-overrides.js';
import { parseCallRequest, parseFilterCriteria, parseStateOverrides, resolveFilter, type FilterCriteria } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import { revertReason } from '../revert-reason.js';
import { blockJson, headerJson, receiptJson, txJson } from './format.js';
import type { Lane } from './lanes.js';
import { logsReply } from './log-reply.js';
import type { CallContext } from './request.js';
import {
  ArgumentError,
  hexData,
  kindOf,
  parseAddress,
  parseBlockNumber,
  parseBlockRef,
  parseBool,
  parseData,
  parseHash,
  parseIndex,
  parseSlot,
  quantity,
} from './hex.js';

export interface EthMethodsOptions {
  readonly clientVersion: string;
  /** The node-held accounts (eth_accounts). */
  readonly accounts: () => Promise<readonly Address[]>;
  /** eth_call and eth_estimateGas run in `call`; eth_getLogs and eth_feeHistory in `scan` (lanes.ts). */
  readonly lanes: { readonly call: Lane; readonly scan: Lane };
}

/** geth caps eth_feeHistory's block count at 1,024 and its percentiles at 100. */
const MAX_FEE_HISTORY_BLOCKS = 1_024;
const MAX_PERCENTILES = 100;

/** math.HexOrDecimal64: a JSON number, a decimal string or a 0x-hex string. */
function parseBlockCount(v: unknown): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/.test(v)) n = Number(BigInt(v));
  else throw new ArgumentError(`cannot unmarshal ${typeof v === 'string' ? 'invalid string' : kindOf(v)} into block count`);
  if (!Number.isSafeInteger(n) || n < 0) throw new ArgumentError('block count must be a non-negative integer');
  return Math.min(n, MAX_FEE_HISTORY_BLOCKS);
}

function parsePercentiles(v: unknown): number[] {
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into percentile list`);
  if (v.length > MAX_PERCENTILES) throw new ArgumentError(`more than ${MAX_PERCENTILES} reward percentiles`);
  for (let i = 0; i < v.length; i++) {
    const p = v[i] as unknown;
    // Never String() of what came: a nested array's text is built recursively (a stack overflow was -32603).
    if (typeof p !== 'number') throw new ArgumentError(`cannot unmarshal ${kindOf(p)} into reward percentile`);
    if (!(p >= 0 && p <= 100)) throw new ArgumentError(`invalid reward percentile: ${p}`);
    if (i > 0 && p < (v[i - 1] as number)) throw new ArgumentError(`invalid reward percentile: #${i - 1}:${String(v[i - 1])} > #${i}:${p}`);
  }
  return v as number[];
}

/** Block overrides of one call: beaconRoot and withdrawals belong to eth_simulateV1's blocks only, as geth answers. */
function singleCallBlockOverrides(v: unknown): BlockOverrides | undefined {
  const o = v as BlockOverrides | undefined;
  if (o?.beaconRoot !== undefined) throw new EvmRpcError(-32000, 'block override "beaconRoot" is not supported for this RPC method');
  if (o?.withdrawals !== undefined) throw new EvmRpcError(-32000, 'block override "withdrawals" is not supported for this RPC method');
  return o;
}

/** A failed call as Ethereum clients expect it: code 3 with the revert data, or -32000 with the EVM error. */
export function callFailure(result: CallResult): EvmRpcError {
  const err = result.error!;
  if (err.kind === 'revert') {
    const reason = revertReason(result.returnData);
    return new EvmRpcError(3, reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`, hexData(result.returnData));
  }
  return new EvmRpcError(-32000, err.message);
}

export function ethMethods(backend: EvmBackend, opts: EthMethodsOptions): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  const def = (name: string, args: MethodSpec['args'], run: MethodSpec['run']): void => void m.set(name, { args, run });
  const chainIdHex = quantity(backend.chainId);
  const networkId = backend.networkId.toString(10);

  def('web3_clientVersion', [], () => opts.clientVersion);
  def('web3_sha3', [required(parseData)], (a) => hexData(keccak_256(a[0] as Uint8Array)));
  def('net_version', [], () => networkId);
  def('net_listening', [], () => true);
  def('net_peerCount', [], () => quantity(backend.peerCount()));

  def('eth_chainId', [], () => chainIdHex);
  def('eth_blockNumber', [], () => quantity(backend.blockNumber()));
  def('eth_syncing', [], () => {
    const s = backend.syncing();
    if (s === false) return false;
    return { startingBlock: quantity(s.startingBlock), currentBlock: quantity(s.currentBlock), highestBlock: quantity(s.highestBlock) };
  });
  def('eth_accounts', [], async () => (await opts.accounts()).map(hexData));

  const blockBy = async (ref: BlockRef, fullTx: boolean): Promise<unknown> => {
    const b = await backend.block(ref);
    return b ? blockJson(b, fullTx) : null;
  };
  def('eth_getBlockByNumber', [required(parseBlockNumber), required(parseBool)], (a) => blockBy(a[0] as BlockRef, a[1] as boolean));
  def('eth_getBlockByHash', [required(parseHash), required(parseBool)], (a) => blockBy({ hash: a[0] as Uint8Array }, a[1] as boolean));

  const headerBy = async (ref: BlockRef): Promise<unknown> => {
    const b = await backend.block(ref);
    return b ? headerJson(b.header) : null;
  };
  def('eth_getHeaderByNumber', [required(parseBlockNumber)], (a) => headerBy(a[0] as BlockRef));
  def('eth_getHeaderByHash', [required(parseHash)], (a) => headerBy({ hash: a[0] as Uint8Array }));

  const txCount = async (ref: BlockRef): Promise<unknown> => {
    const b = await backend.block(ref);
    return b ? quantity(b.transactions.length) : null;
  };
  def('eth_getBlockTransactionCountByNumber', [required(parseBlockNumber)], (a) => txCount(a[0] as BlockRef));
  def('eth_getBlockTransactionCountByHash', [required(parseHash)], (a) => txCount({ hash: a[0] as Uint8Array }));
  // No uncles on this chain; these answer as geth does for a block without any.
  const uncleCount = async (ref: BlockRef): Promise<unknown> => ((await backend.block(ref)) ? '0x0' : null);
  def('eth_getUncleCountByBlockNumber', [required(parseBlockNumber)], (a) => uncleCount(a[0] as BlockRef));
  def('eth_getUncleCountByBlockHash', [required(parseHash)], (a) => uncleCount({ hash: a[0] as Uint8Array }));
  // No uncle at any index: null, as geth answers an index past a block's uncles.
  def('eth_getUncleByBlockNumberAndIndex', [required(parseBlockNumber), required(parseIndex)], () => null);
  def('eth_getUncleByBlockHashAndIndex', [required(parseHash), required(parseIndex)], () => null);
  // The address this node's blocks pay fees to (the miner field of its last accepted block), as
  // coreth answers its etherbase.
  def('eth_coinbase', [], async () => {
    const b = await backend.block('latest');
    return b ? hexData(b.header.miner) : null;
  });

  const txAt = async (ref: BlockRef, index: number): Promise<unknown> => {
    const b = await backend.block(ref);
    const tx = b?.transactions[index];
    return b && tx ? txJson(tx, b.header.hash, b.header.number, index, b.header.timestamp) : null;
  };
  def('eth_getTransactionByBlockHashAndIndex', [required(parseHash), required(parseIndex)], (a) =>
    txAt({ hash: a[0] as Uint8Array }, a[1] as number),
  );
  def('eth_getTransactionByBlockNumberAndIndex', [required(parseBlockNumber), required(parseIndex)], (a) =>
    txAt(a[0] as BlockRef, a[1] as number),
  );

  const stateArgs = [required(parseAddress), required(parseBlockRef)];
  def('eth_getBalance', stateArgs, async (a) => quantity(await backend.balance(a[0] as Uint8Array, a[1] as BlockRef)));
  def('eth_getTransactionCount', stateArgs, async (a) => quantity(await backend.nonce(a[0] as Uint8Array, a[1] as BlockRef)));
  def('eth_getCode', stateArgs, async (a) => hexData(await backend.code(a[0] as Uint8Array, a[1] as BlockRef)));
  def('eth_getStorageAt', [required(parseAddress), required(parseSlot), required(parseBlockRef)], async (a) =>
    hexData(await backend.storageAt(a[0] as Uint8Array, a[1] as Uint8Array, a[2] as BlockRef)),
  );

  def('eth_gasPrice', [], async () => quantity(await backend.gasPrice()));
  def('eth_maxPriorityFeePerGas', [], async () => quantity(await backend.maxPriorityFeePerGas()));
  def('eth_baseFee', [], async () => {
    const b = await backend.block('latest');
    return b ? quantity(b.header.baseFeePerGas) : null;
  });
  const { call: callLane, scan: scanLane } = opts.lanes;
  def('eth_feeHistory', [required(parseBlockCount), required(parseBlockNumber), optional(parsePercentiles)], async (a, ctx) => {
    const count = a[0] as number;
    const percentiles = (a[2] as number[] | undefined) ?? [];
    if (count === 0) return { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [] };
    // Up to 1,024 blocks read: a scan.
    const h = await scanLane.run(ctx.client, ctx.signal, () => backend.feeHistory(count, a[1] as BlockRef, percentiles));
    const out: Record<string, unknown> = {
      oldestBlock: quantity(h.oldestBlock),
      baseFeePerGas: h.baseFeePerGas.map(quantity),
      gasUsedRatio: h.gasUsedRatio,
    };
    if (percentiles.length > 0 && h.reward) out.reward = h.reward.map((r) => r.map(quantity));
    return out;
  });

  const callArgs = [required(parseCallRequest), optional(parseBlockRef), optional(parseStateOverrides), optional(parseBlockOverrides)];
  // EVM execution: in the call lane (fair between clients, bounded queues), stopped with the request.
  const inCallLane = <T>(ctx: CallContext, fn: () => Promise<T>): Promise<T> => callLane.run(ctx.client, ctx.signal, fn);
  def('eth_call', callArgs, async (a, ctx) => {
    const req = a[0] as CallRequest;
    const ref = (a[1] as BlockRef | undefined) ?? 'latest';
    const blockOverrides = singleCallBlockOverrides(a[3]);
    const result = await inCallLane(ctx, () => backend.call(req, ref, a[2] as StateOverrides | undefined, ctx.signal, blockOverrides));
    if (result.error) throw callFailure(result);
    return hexData(result.returnData);
  });
  def('eth_estimateGas', callArgs, async (a, ctx) => {
    const blockOverrides = singleCallBlockOverrides(a[3]);
    return quantity(
      await inCallLane(ctx, () => backend.estimateGas(a[0] as CallRequest, (a[1] as BlockRef | undefined) ?? 'latest', a[2] as StateOverrides | undefined, ctx.signal, blockOverrides)),
    );
  });
  def('eth_sendRawTransaction', [required(parseData)], async (a) => {
    const raw = a[0] as Uint8Array;
    if (raw.length === 0) throw new EvmRpcError(-32000, 'typed transaction too short');
    return hexData(await backend.sendRawTransaction(raw));
  });

  def('eth_getTransactionByHash', [required(parseHash)], async (a) => {
    const loc = await backend.transaction(a[0] as Uint8Array);
    return loc ? txJson(loc.tx, loc.blockHash, loc.blockNumber, loc.index, loc.blockTimestamp) : null;
  });
  def('eth_getTransactionReceipt', [required(parseHash)], async (a) => {
    const r = await backend.receipt(a[0] as Uint8Array);
    return r ? receiptJson(r) : null;
  });
  def('eth_getBlockReceipts', [required(parseBlockRef)], async (a) => {
    const rs = await backend.blockReceipts(a[0] as BlockRef);
    return rs ? rs.map(receiptJson) : null;
  });
  def('eth_getLogs', [required(parseFilterCriteria)], async (a, ctx) => {
    const filter = resolveFilter(a[0] as FilterCriteria, backend.blockNumber());
    if (!filter) return [];
    return scanLane.run(ctx.client, ctx.signal, async () => logsReply(await backend.logs(filter, ctx.signal), ctx.budget, ctx.signal));
  });
  return m;
}
