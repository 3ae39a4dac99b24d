/**
 * The seam between the EVM chain (src/chain: blocks, state, mempool, execution on @ethereumjs/vm)
 * and the Ethereum JSON-RPC front end (src/rpc: HTTP and WebSocket, hex formats, filters,
 * subscriptions, personal accounts). The chain implements `EvmBackend`; the RPC layer only formats
 * and validates, and never imports @ethereumjs.
 *
 * Values are plain data: quantities are bigint, byte strings Uint8Array (addresses 20 bytes, hashes
 * 32), so the RPC layer does all hex encoding. Every method may throw `EvmRpcError` (a JSON-RPC error
 * with Ethereum's code and text); anything else thrown is a bug the RPC layer reports as -32603.
 */
import type { Observable } from 'rxjs';
import { NodeError } from '@cornice/sdk';

export type Address = Uint8Array;
export type Hash = Uint8Array;

/** A block tag or number as clients send it; `{ hash }` where the spec allows a block hash (EIP-1898). */
export type BlockRef =
  | bigint
  | 'latest'
  | 'pending'
  | 'safe'
  | 'finalized'
  | 'accepted'
  | 'earliest'
  | { readonly hash: Hash; readonly requireCanonical?: boolean };

export interface HeaderView {
  readonly number: bigint;
  readonly hash: Hash;
  readonly parentHash: Hash;
  /** Unix seconds. */
  readonly timestamp: bigint;
  readonly stateRoot: Hash;
  readonly transactionsRoot: Hash;
  readonly receiptsRoot: Hash;
  /** 256 bytes. */
  readonly logsBloom: Uint8Array;
  readonly miner: Address;
  readonly difficulty: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  readonly baseFeePerGas: bigint;
  readonly extraData: Uint8Array;
  readonly mixHash: Hash;
  /** 8 bytes. */
  readonly nonce: Uint8Array;
  readonly sha3Uncles: Hash;
  /** RLP size of the whole block in bytes. */
  readonly size: bigint;
  readonly withdrawalsRoot?: Hash;
  readonly blobGasUsed?: bigint;
  readonly excessBlobGas?: bigint;
  readonly parentBeaconBlockRoot?: Hash;
  /** Extra JSON fields of the header (an EVM flavour's, e.g. the subnet-EVM's blockGasCost), written as they are. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

export interface AccessListEntry {
  readonly address: Address;
  readonly storageKeys: readonly Hash[];
}

export interface TxView {
  readonly hash: Hash;
  /** 0 legacy, 1 EIP-2930, 2 EIP-1559. */
  readonly type: number;
  readonly from: Address;
  readonly to: Address | null;
  readonly nonce: bigint;
  readonly value: bigint;
  readonly input: Uint8Array;
  readonly gas: bigint;
  /** Legacy and EIP-2930: the gas price; EIP-1559: the effective price once mined, else maxFeePerGas. */
  readonly gasPrice: bigint;
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  readonly accessList?: readonly AccessListEntry[];
  readonly chainId?: bigint;
  readonly v: bigint;
  readonly r: bigint;
  readonly s: bigint;
  readonly yParity?: number;
}

export interface BlockView {
  readonly header: HeaderView;
  readonly transactions: readonly TxView[];
}

/** Where a transaction is: a mined one has its block; a pending one has none. */
export interface TxLocation {
  readonly tx: TxView;
  readonly blockHash?: Hash;
  readonly blockNumber?: bigint;
  /** The block's timestamp (seconds). */
  readonly blockTimestamp?: bigint;
  readonly index?: number;
}

export interface LogView {
  readonly address: Address;
  readonly topics: readonly Hash[];
  readonly data: Uint8Array;
  readonly blockNumber: bigint;
  readonly blockHash: Hash;
  readonly transactionHash: Hash;
  readonly transactionIndex: number;
  /** Index in the block. */
  readonly logIndex: number;
  readonly removed: boolean;
}

export interface ReceiptView {
  readonly transactionHash: Hash;
  readonly transactionIndex: number;
  readonly blockHash: Hash;
  readonly blockNumber: bigint;
  readonly from: Address;
  readonly to: Address | null;
  readonly cumulativeGasUsed: bigint;
  readonly gasUsed: bigint;
  readonly effectiveGasPrice: bigint;
  readonly contractAddress: Address | null;
  readonly logs: readonly LogView[];
  readonly logsBloom: Uint8Array;
  /** 1 success, 0 failure. */
  readonly status: 0 | 1;
  readonly type: number;
}

/** eth_call / eth_estimateGas / personal_sendTransaction arguments (absent fields take the chain's defaults). */
export interface CallRequest {
  readonly from?: Address;
  readonly to?: Address | null;
  readonly gas?: bigint;
  readonly gasPrice?: bigint;
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  readonly value?: bigint;
  readonly data?: Uint8Array;
  readonly nonce?: bigint;
  readonly accessList?: readonly AccessListEntry[];
}

/** geth's state override set for eth_call / eth_estimateGas, by lowercase 0x address. */
export type StateOverrides = ReadonlyMap<
  string,
  {
    readonly balance?: bigint;
    readonly nonce?: bigint;
    readonly code?: Uint8Array;
    /** Replaces the whole storage. */
    readonly state?: ReadonlyMap<string, Hash>;
    /** Changes these slots only (keys: lowercase 0x 32-byte hex). */
    readonly stateDiff?: ReadonlyMap<string, Hash>;
  }
>;

/**
 * geth's BlockOverrides: fields of the block a call runs in (eth_call, eth_estimateGas) or of a
 * simulated block (eth_simulateV1). Only the EVM's view of the block changes, never a stored block.
 */
export interface BlockOverrides {
  readonly number?: bigint;
  readonly difficulty?: bigint;
  /** Unix seconds. */
  readonly time?: bigint;
  readonly gasLimit?: bigint;
  /** The coinbase. */
  readonly feeRecipient?: Address;
  /** The mix hash (PREVRANDAO). */
  readonly prevRandao?: Hash;
  readonly baseFeePerGas?: bigint;
  readonly blobBaseFee?: bigint;
  /** eth_simulateV1 only (eth_call and eth_estimateGas refuse it, as geth). */
  readonly beaconRoot?: Hash;
  /** eth_simulateV1 only; this chain has no withdrawals, so only an empty list runs. */
  readonly withdrawals?: readonly unknown[];
}

export interface CallResult {
  readonly returnData: Uint8Array;
  readonly gasUsed: bigint;
  /** Set when execution failed: 'revert' (returnData holds the revert data) or another EVM error. */
  readonly error?: { readonly kind: 'revert' | 'error'; readonly message: string };
}

/** eth_createAccessList's answer. */
export interface AccessListResult {
  readonly accessList: readonly AccessListEntry[];
  /** Gas of the tx with this access list. */
  readonly gasUsed: bigint;
  /** Why the call failed with it ("execution reverted", "out of gas", …), as geth words it. */
  readonly error?: string;
}

/** One block of eth_simulateV1: overrides applied before its calls, which run in order. */
export interface SimulateBlockRequest {
  readonly blockOverrides?: BlockOverrides;
  readonly stateOverrides?: StateOverrides;
  readonly calls: readonly CallRequest[];
}

/** eth_simulateV1's payload (returnFullTransactions is the front end's). */
export interface SimulateRequest {
  readonly blocks: readonly SimulateBlockRequest[];
  /** ETH transfers as logs of 0xeeee…eeee (geth's). */
  readonly traceTransfers: boolean;
  /** Nonce, balance, base fee checked as for a tx (default off: as eth_call, base fee 0). */
  readonly validation: boolean;
}

export interface SimulatedCall {
  readonly status: 0 | 1;
  readonly returnData: Uint8Array;
  readonly gasUsed: bigint;
  readonly logs: readonly LogView[];
  /** A failed call's: code 3 "execution reverted[: reason]" with the revert data, or -32015 and the EVM's error. */
  readonly error?: { readonly code: number; readonly message: string; readonly data?: Uint8Array };
}

export interface SimulatedBlock {
  readonly block: BlockView;
  readonly calls: readonly SimulatedCall[];
}

/**
 * What a debug_trace* request asks (the front end checked the shapes; the chain checks the tracer's
 * name and config: -32602).
 */
export interface TraceRequest {
  /** A built-in tracer's name; undefined: the struct logger. */
  readonly tracer?: string;
  readonly tracerConfig?: Readonly<Record<string, unknown>>;
  /** The request's top-level fields: the struct logger's options (disableStack, enableMemory, limit, …). */
  readonly logger: Readonly<Record<string, unknown>>;
  /** How long the replay may run, ms (geth's `timeout`; 0: no bound but the request's own). */
  readonly timeoutMs: number;
  /** Most characters of the traces' JSON (past it: -32003, nothing built whole). */
  readonly maxChars: number;
}

/** One traced tx of a block: its hash and the tracer's result as JSON text. */
export interface TxTraceJson {
  readonly txHash: Hash;
  readonly json: string;
}

/** A block to trace: an accepted one, or a block of this chain given as RLP (debug_traceBlock). */
export type TraceBlockRef = BlockRef | { readonly rlp: Uint8Array };

/** A resolved log filter: block range inclusive, or one block by hash. */
export interface LogFilter {
  readonly fromBlock?: bigint;
  readonly toBlock?: bigint;
  readonly blockHash?: Hash;
  /** Any of these addresses (empty: any address). */
  readonly addresses: readonly Address[];
  /** Per position: null matches anything, else any of the hashes. */
  readonly topics: readonly (readonly Hash[] | null)[];
}

export interface FeeHistory {
  readonly oldestBlock: bigint;
  readonly baseFeePerGas: readonly bigint[];
  readonly gasUsedRatio: readonly number[];
  readonly reward?: readonly (readonly bigint[])[];
}

/** One storage slot's EIP-1186 proof (eth_getProof). */
export interface StorageProofView {
  /** The slot's value (0 when unset). */
  readonly value: bigint;
  /** RLP trie nodes from the account's storage root down the path of keccak(slot), root first; empty for an empty storage trie. */
  readonly proof: readonly Uint8Array[];
}

/**
 * An account's EIP-1186 proof at a block (eth_getProof). An absent account answers as coreth does:
 * balance and nonce 0, the empty code's hash and the empty trie's root, its `accountProof` proving the
 * absence, and each slot 0 with an empty proof.
 */
export interface AccountProofView {
  readonly balance: bigint;
  readonly nonce: bigint;
  readonly codeHash: Hash;
  readonly storageHash: Hash;
  /** RLP trie nodes from the block's state root down the path of keccak(address), root first. */
  readonly accountProof: readonly Uint8Array[];
  /** One per slot asked, in the order asked. */
  readonly storageProof: readonly StorageProofView[];
}

export interface AcceptedBlock {
  readonly block: BlockView;
  readonly receipts: readonly ReceiptView[];
}

/** The mempool's txs as geth's txpool_content splits them, each list by sender then nonce. */
export interface PoolContent {
  /** Executable: each sender's contiguous nonces from its account nonce. */
  readonly pending: readonly TxView[];
  /** Future: after a nonce gap. */
  readonly queued: readonly TxView[];
}

/** A transaction and its encoding (legacy RLP or typed envelope): eth_signTransaction, eth_fillTransaction. */
export interface TxEnvelope {
  readonly raw: Uint8Array;
  /** Unsigned (eth_fillTransaction): v, r, s 0 and the hash of that encoding. */
  readonly tx: TxView;
}

/**
 * What tells a backend call to stop: the request's client went away or its deadline passed. An
 * AbortSignal is one; the front end passes a lighter object of the same shape (rpc/request.ts's
 * Cancel): making an AbortSignal per request is a visible part of a cheap read's cost, such as
 * eth_getBalance's (bench/evm.mjs, "EVM eth_getBalance/s through a lean client").
 */
export interface StopSignal {
  readonly aborted: boolean;
  /** Why (an EvmRpcError from the front end), once aborted. */
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What the chain offers the RPC front end (one per chain instance). */
export interface EvmBackend {
  /** EVM chain ID (eth_chainId), 43110 on the local C-Chain. */
  readonly chainId: bigint;
  /** net_version: the chain's internal network ID (1 on the C-Chain). */
  readonly networkId: bigint;

  /** Number of the last accepted block. */
  blockNumber(): bigint;
  /**
   * The block a reference names (pending/latest/safe/finalized/accepted = last accepted);
   * undefined when the number or hash is unknown.
   */
  block(ref: BlockRef): Promise<BlockView | undefined>;
  /** State reads at a block; 'pending' nonce is the mempool's next nonce. Unknown block: EvmRpcError. */
  balance(address: Address, ref: BlockRef): Promise<bigint>;
  nonce(address: Address, ref: BlockRef): Promise<bigint>;
  code(address: Address, ref: BlockRef): Promise<Uint8Array>;
  storageAt(address: Address, slot: Hash, ref: BlockRef): Promise<Hash>;

  /**
   * EIP-1186 proof of `address` and its `slots` (32 bytes each) in the state of `ref`'s block. Unknown
   * block: EvmRpcError, as for balance. `signal` (the request's) stops the trie walks between slots,
   * rejecting with the signal's reason.
   */
  proof(address: Address, slots: readonly Hash[], ref: BlockRef, signal?: StopSignal): Promise<AccountProofView>;

  transaction(hash: Hash): Promise<TxLocation | undefined>;
  receipt(hash: Hash): Promise<ReceiptView | undefined>;
  blockReceipts(ref: BlockRef): Promise<readonly ReceiptView[] | undefined>;
  /**
   * Bounded (block range and result count): too wide a query is an EvmRpcError, not a long scan.
   * `signal` (the request's: its client left or its deadline passed) stops the scan between blocks,
   * rejecting with the signal's reason.
   */
  logs(filter: LogFilter, signal?: StopSignal): Promise<readonly LogView[]>;

  /** Admits a signed tx (RLP / typed envelope) to the mempool; its hash. Ethereum's error texts. */
  sendRawTransaction(raw: Uint8Array): Promise<Hash>;
  /** Fills nonce, gas and fees of `req` as a wallet would, signs with `privateKey`, admits it; its hash. */
  sendTransaction(req: CallRequest & { readonly from: Address }, privateKey: Uint8Array): Promise<Hash>;
  /**
   * Runs `req` on the state at `ref` (nothing stays). `signal` (the request's) halts the execution at
   * its next look at the clock (chain/call-guard.ts) and rejects with the signal's reason: a call whose
   * client left does not run to its deadline.
   */
  call(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, signal?: StopSignal, blockOverrides?: BlockOverrides): Promise<CallResult>;
  /** The gas `req` needs (geth's search); a revert is an EvmRpcError with code 3 and the revert data. `signal` as for call. */
  estimateGas(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, signal?: StopSignal, blockOverrides?: BlockOverrides): Promise<bigint>;

  /**
   * The access list `req` touches at `ref` and the gas it uses with it (geth's loop); a failing call
   * is an answer with `error`, not a throw. `signal` as for call.
   */
  createAccessList(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, signal?: StopSignal): Promise<AccessListResult>;

  /**
   * eth_simulateV1: the blocks run in order on the state at `ref` (each on the last), nothing stays.
   * Invalid sequences and refused calls are EvmRpcErrors with geth's codes (-38020 block order, …);
   * a failing call is a call result with status 0. `signal` as for call.
   */
  simulate(req: SimulateRequest, ref: BlockRef, signal?: StopSignal): Promise<readonly SimulatedBlock[]>;

  /**
   * debug_traceTransaction: the mined tx `hash` replayed on its block's parent state after the txs
   * before it, under the tracer `req` names; its result as JSON text. Unknown tx: -32000 "transaction
   * not found"; a pooled one: "transaction not yet mined"; a bad tracer: -32602. `signal` stops it.
   */
  traceTransaction(hash: Hash, req: TraceRequest, signal?: StopSignal): Promise<string>;
  /** debug_traceBlock*: every tx of the block traced; genesis: -32000 "genesis is not traceable". */
  traceBlock(ref: TraceBlockRef, req: TraceRequest, signal?: StopSignal): Promise<readonly TxTraceJson[]>;
  /** debug_traceCall: `call` run as a tx on `ref`'s state, as eth_call runs it, under the tracer. */
  traceCall(call: CallRequest, ref: BlockRef, req: TraceRequest, overrides?: StateOverrides, blockOverrides?: BlockOverrides, signal?: StopSignal): Promise<string>;
  /** debug_getRawHeader, debug_getRawBlock: RLP of an accepted block's header or block; undefined when unknown. */
  rawHeader(ref: BlockRef): Promise<Uint8Array | undefined>;
  rawBlock(ref: BlockRef): Promise<Uint8Array | undefined>;
  /** debug_getRawReceipts: each receipt's consensus encoding (typed receipts with their type byte). */
  rawReceipts(ref: BlockRef): Promise<readonly Uint8Array[] | undefined>;

  /**
   * The mempool's txs (txpool_content, txpool_inspect, eth_pendingTransactions), only `from`'s when
   * given: as many as the pool's bounds let it hold, so a caller sizes its reply before building it.
   */
  poolContent(from?: Address): PoolContent;
  /** How many txs the mempool holds in each part (txpool_status). */
  poolStatus(): { readonly pending: number; readonly queued: number };
  /** The encoding of a mined or pooled tx (eth_getRawTransactionByHash); undefined if unknown. */
  rawTransaction(hash: Hash): Promise<Uint8Array | undefined>;
  /**
   * `req` with nonce, gas, fees and chain ID filled as eth_sendTransaction fills them, unsigned
   * (eth_fillTransaction; `from` absent: the zero address's nonce, as geth). `signal` stops its gas
   * estimate as it stops estimateGas.
   */
  fillTransaction(req: CallRequest, signal?: StopSignal): Promise<TxEnvelope>;
  /** `req` filled as fillTransaction does, signed with `privateKey`, not sent (eth_signTransaction). */
  signTransaction(req: CallRequest & { readonly from: Address }, privateKey: Uint8Array): Promise<TxEnvelope>;

  gasPrice(): Promise<bigint>;
  maxPriorityFeePerGas(): Promise<bigint>;
  feeHistory(blockCount: number, newest: BlockRef, percentiles: readonly number[]): Promise<FeeHistory>;
  /** False once the chain follows the network (eth_syncing). */
  syncing(): false | { readonly startingBlock: bigint; readonly currentBlock: bigint; readonly highestBlock: bigint };
  /** Connected peers of this chain (net_peerCount). */
  peerCount(): number;

  /** Each accepted block with its receipts, in order (newHeads and logs subscriptions, filters). */
  readonly accepted$: Observable<AcceptedBlock>;
  /** Each transaction admitted to the mempool (newPendingTransactions). */
  readonly pending$: Observable<TxView>;
}

export type EvmRpcErrorCode =
  | -32000
  | -32001
  | -32002
  | -32003
  | -32005
  | -32600
  | -32601
  | -32602
  | 3
  // eth_simulateV1's (the execution-apis' codes, as geth answers them): nonce too low / too high,
  // intrinsic gas too low, insufficient funds, block gas limit reached, block numbers / timestamps
  // out of order, initcode too large, a client limit exceeded.
  | -38010
  | -38011
  | -38013
  | -38014
  | -38015
  | -38020
  | -38021
  | -38025
  | -38026;

/**
 * A JSON-RPC error as Ethereum clients expect it, e.g. -32000 "insufficient funds for gas * price +
 * value", -32000 "nonce too low", 3 "execution reverted" with the revert data as 0x hex in `data`.
 */
export class EvmRpcError extends NodeError<'EvmRpc'> {
  constructor(
    readonly rpcCode: EvmRpcErrorCode,
    message: string,
    readonly rpcData?: unknown,
  ) {
    super('EvmRpc', message);
  }
}
