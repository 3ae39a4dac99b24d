/**
 * `EvmBackend` over the chain (the RPC front end's adapter): block and state reads, the tx index,
 * logs, eth_call / eth_estimateGas on the reading VM with Ethereum's error texts, fee answers. Txs
 * sent go to the chain's admission (admission.ts); a tx signed here is made here first.
 */
import { fromHex, toHex } from '@cornice/sdk';
import { createBlock } from '@ethereumjs/block';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, bytesToBigInt, createContractAddress, setLengthLeft } from '@ethereumjs/util';
import { runTx, type RunTxResult } from '@ethereumjs/vm';
import type { Observable } from 'rxjs';
import {
  EvmRpcError,
  type AcceptedBlock,
  type AccessListResult,
  type AccountProofView,
  type Address as Addr,
  type BlockOverrides,
  type BlockRef,
  type BlockView,
  type CallRequest,
  type CallResult,
  type EvmBackend,
  type FeeHistory,
  type Hash,
  type LogFilter,
  type LogView,
  type PoolContent,
  type ReceiptView,
  type SimulatedBlock,
  type SimulateRequest,
  type StateOverrides,
  type StopSignal,
  type TxEnvelope,
  type TxLocation,
  type TxView,
  type TraceBlockRef,
  type TraceRequest,
  type TxTraceJson,
} from '../evm-backend.js';
import type { EvmBlock } from '../block.js';
import { findAccessList } from './access-list.js';
import { overriddenBlock } from './block-context.js';
import { callTx } from './call-tx.js';
import { Simulation } from './simulate.js';
import { ChainTraces } from './tracing/chain-traces.js';
import { DEFAULT_CALL_TIMEOUT_MS, SLICE_MS } from './call-guard.js';
import type { EvmChain } from './chain.js';
import { rpcErr, shortReason } from './eth-errors.js';
import { listenToEvm } from './evm-events.js';
import { nextHeaderData } from './executor.js';
import { proveAccount } from './state/proof.js';
import { RulesHalt, withBlockInfo } from './hooks.js';
import type { StateView } from './reader.js';
import { keccak256 } from './crypto.js';
import { buildTx, signWith, unsignedTxView } from './tx-fill.js';
import { blockView, effectiveGasPrice, receiptViews, txView } from './views.js';

/** Default of EvmChainOptions.receiptWaitMs. */
const DEFAULT_RECEIPT_WAIT_MS = 2_000;

const ZERO_ADDRESS = new Uint8Array(20);
/** Error(string) selector. */
const ERROR_SELECTOR = '08c379a0';

const hex = (b: Uint8Array) => `0x${toHex(b)}`;

/** "execution reverted[: reason]" as geth words it, with the revert data. */
export function revertError(returnData: Uint8Array): EvmRpcError {
  let message = 'execution reverted';
  const reason = decodeRevertReason(returnData);
  if (reason !== undefined) message += `: ${reason}`;
  return new EvmRpcError(3, message, hex(returnData));
}

export function decodeRevertReason(data: Uint8Array): string | undefined {
  if (data.length < 4 + 64 || toHex(data.subarray(0, 4)) !== ERROR_SELECTOR) return undefined;
  const body = data.subarray(4);
  const offset = Number(bytesToBigInt(body.subarray(0, 32)));
  if (offset + 32 > body.length) return undefined;
  const len = Number(bytesToBigInt(body.subarray(offset, offset + 32)));
  if (offset + 32 + len > body.length) return undefined;
  return new TextDecoder().decode(body.subarray(offset + 32, offset + 32 + len));
}

interface ReceiptCacheEntry {
  readonly receipts: readonly ReceiptView[];
}

export class ChainBackend implements EvmBackend {
  readonly chainId: bigint;
  readonly networkId: bigint;
  readonly accepted$: Observable<AcceptedBlock>;
  readonly pending$: Observable<TxView>;
  readonly #receiptCache = new WeakMap<EvmBlock, ReceiptCacheEntry>();
  readonly #viewCache = new WeakMap<EvmBlock, BlockView>();
  readonly #traces: ChainTraces;

  constructor(
    private readonly chain: EvmChain,
    networkId: bigint,
  ) {
    this.chainId = chain.chainId;
    this.networkId = networkId;
    this.accepted$ = chain.accepted$.asObservable();
    this.pending$ = chain.pending$.asObservable();
    this.#traces = new ChainTraces(chain, {
      resolve: (ref) => this.#resolveOrThrow(ref),
      checkRequest: (req) => this.#checkRequest(req),
      gasCap: (b) => this.#gasCap(b),
      rpcGasCap: () => this.#rpcGasCap(),
      blockInfo: (b, ctx) => this.#registerBlockInfo(b, ctx),
      applyOverrides,
    });
  }

  blockNumber(): bigint {
    return BigInt(this.chain.lastAccepted.height);
  }

  async #resolve(ref: BlockRef): Promise<EvmBlock | undefined> {
    if (typeof ref === 'bigint') return this.chain.acceptedAt(ref);
    if (typeof ref === 'object') return this.chain.acceptedByHash(ref.hash);
    if (ref === 'earliest') return this.chain.acceptedAt(0n);
    return this.chain.lastAccepted;
  }

  /** The BlockInfo a call in `b` (or in `ctx`, `b` overridden) shows the rules (`b`'s parent's time). */
  async #registerBlockInfo(b: EvmBlock, ctx = b.eth): Promise<void> {
    const parent = b.height === 0 ? undefined : await this.chain.getBlock(b.eth.header.parentHash);
    withBlockInfo(ctx, parent?.eth.header.timestamp);
  }

  async #resolveOrThrow(ref: BlockRef): Promise<EvmBlock> {
    const b = await this.#resolve(ref);
    if (!b) throw new EvmRpcError(-32000, typeof ref === 'object' ? 'header for hash not found' : 'header not found');
    return b;
  }

  #view(b: EvmBlock): BlockView {
    let v = this.#viewCache.get(b);
    if (!v) {
      v = blockView(b.eth, b.rawBytes.length, this.chain.headerExtras(b.eth));
      this.#viewCache.set(b, v);
    }
    return v;
  }

  #receipts(b: EvmBlock): readonly ReceiptView[] {
    let e = this.#receiptCache.get(b);
    if (!e) {
      e = { receipts: receiptViews(b.eth, b.execution!.receipts, this.chain.common) };
      this.#receiptCache.set(b, e);
    }
    return e.receipts;
  }

  async block(ref: BlockRef): Promise<BlockView | undefined> {
    const b = await this.#resolve(ref);
    return b && this.#view(b);
  }

  #state<T>(b: EvmBlock, fn: (v: StateView) => Promise<T>): Promise<T> {
    return this.chain.reader.at(b.eth.header.stateRoot, fn);
  }

  /**
   * Runs EVM code (eth_call, eth_estimateGas) on a call VM at `b`'s state, within the call timeout,
   * halted early when `signal` aborts: then the signal's reason is thrown (its client left or its
   * request's deadline passed), not a result nobody reads.
   */
  async #execute<T>(b: EvmBlock, signal: StopSignal | undefined, fn: (v: StateView) => Promise<T>): Promise<T> {
    if (signal?.aborted) throw signal.reason;
    let result: T;
    try {
      result = await this.chain.reader.call(b.eth.header.stateRoot, (v) => v.guard.run(this.#callTimeoutMs(), () => fn(v), signal));
    } catch (e) {
      throw signal?.aborted ? signal.reason : e;
    }
    if (signal?.aborted) throw signal.reason;
    return result;
  }

  async #account(address: Addr, ref: BlockRef): Promise<Account | undefined> {
    const b = await this.#resolveOrThrow(ref);
    return this.#state(b, ({ sm }) => sm.getAccount(new Address(address)));
  }

  async balance(address: Addr, ref: BlockRef): Promise<bigint> {
    return (await this.#account(address, ref))?.balance ?? 0n;
  }

  async nonce(address: Addr, ref: BlockRef): Promise<bigint> {
    const n = (await this.#account(address, ref === 'pending' ? 'latest' : ref))?.nonce ?? 0n;
    if (ref !== 'pending') return n;
    const key = toHex(address);
    return this.chain.mempool.pendingNonce(key, n, this.chain.tipNonce(key));
  }

  async code(address: Addr, ref: BlockRef): Promise<Uint8Array> {
    const b = await this.#resolveOrThrow(ref);
    return this.#state(b, ({ sm }) => sm.getCode(new Address(address)));
  }

  async storageAt(address: Addr, slot: Hash, ref: BlockRef): Promise<Hash> {
    const b = await this.#resolveOrThrow(ref);
    const v = await this.#state(b, ({ sm }) => sm.getStorage(new Address(address), setLengthLeft(slot, 32)));
    return setLengthLeft(v, 32);
  }

  async proof(address: Addr, slots: readonly Hash[], ref: BlockRef, signal?: StopSignal): Promise<AccountProofView> {
    const b = await this.#resolveOrThrow(ref);
    return proveAccount(await this.chain.reader.trieAt(b.eth.header.stateRoot), address, slots, signal);
  }

  async transaction(hash: Hash): Promise<TxLocation | undefined> {
    const pending = this.chain.mempool.get(toHex(hash));
    const loc = await this.chain.txLocation(hash);
    if (loc) {
      const b = await this.chain.acceptedAt(loc.number);
      const tx = b && this.#view(b).transactions[loc.index];
      if (b && tx) return { tx, blockHash: b.eth.hash(), blockNumber: loc.number, blockTimestamp: b.eth.header.timestamp, index: loc.index };
    }
    return pending ? { tx: txView(pending.tx) } : undefined;
  }

  async receipt(hash: Hash): Promise<ReceiptView | undefined> {
    // A pooled tx is in no accepted block (the pool keeps it until one is). Its receipt is usually a
    // few ms away, so wait for it (bounded) rather than answer null: ethers v6's tx.wait() takes a
    // null receipt, then watches for blocks *after* the one it first sees, so a block accepted in
    // between on an idle chain (no later block comes) left it waiting forever.
    const key = toHex(hash);
    if (this.chain.mempool.get(key)) {
      await this.chain.untilLeavesPool(key, this.chain.options.receiptWaitMs ?? DEFAULT_RECEIPT_WAIT_MS);
      if (this.chain.mempool.get(key)) return undefined;
    }
    const loc = await this.chain.txLocation(hash);
    if (!loc) return undefined;
    const b = await this.chain.acceptedAt(loc.number);
    return b && this.#receipts(b)[loc.index];
  }

  async blockReceipts(ref: BlockRef): Promise<readonly ReceiptView[] | undefined> {
    const b = await this.#resolve(ref);
    return b && this.#receipts(b);
  }

  async logs(filter: LogFilter, signal?: StopSignal): Promise<readonly LogView[]> {
    const maxResults = this.chain.options.logsMaxResults ?? 10_000;
    const match = (l: LogView) =>
      (filter.addresses.length === 0 || filter.addresses.some((a) => bytesEq(a, l.address))) &&
      filter.topics.every((alts, i) => alts === null || (l.topics[i] !== undefined && alts.some((t) => bytesEq(t, l.topics[i]!))));
    const out: LogView[] = [];
    const collect = (b: EvmBlock) => {
      for (const r of this.#receipts(b)) {
        for (const l of r.logs) {
          if (!match(l)) continue;
          if (out.length >= maxResults) throw new EvmRpcError(-32005, `query returned more than ${maxResults} results`);
          out.push(l);
        }
      }
    };
    if (filter.blockHash) {
      const b = await this.chain.acceptedByHash(filter.blockHash);
      if (!b) throw new EvmRpcError(-32000, 'unknown block');
      collect(b);
      return out;
    }
    const last = BigInt(this.chain.lastAccepted.height);
    const from = filter.fromBlock ?? last;
    const to = filter.toBlock === undefined || filter.toBlock > last ? last : filter.toBlock;
    if (from > to) return out;
    const maxRange = this.chain.options.logsMaxBlockRange ?? 100_000n;
    if (to - from + 1n > maxRange) throw new EvmRpcError(-32005, `block range too large: ${to - from + 1n} blocks, the limit is ${maxRange}`);
    let lastTurn = performance.now();
    for await (const [n, bloom] of this.chain.store.bloomsIn(from, to)) {
      // A scan stops with its request (client gone, deadline passed), and lets the event loop turn
      // (blocks in the cache are read without one).
      if (signal?.aborted) throw signal.reason;
      if (performance.now() - lastTurn >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        lastTurn = performance.now();
      }
      if (!bloomMayMatch(bloom, filter)) continue;
      const b = await this.chain.acceptedAt(n);
      if (b) collect(b);
    }
    return out;
  }

  // ------------------------------------------------------------------ admission (the chain's: admission.ts)

  sendRawTransaction(raw: Uint8Array): Promise<Hash> {
    return this.chain.admission.sendRaw(raw);
  }

  async sendTransaction(req: CallRequest & { readonly from: Addr }, privateKey: Uint8Array): Promise<Hash> {
    const tx = await this.#unsigned(req);
    // geth's fee cap refuses it before it is signed or pooled.
    this.chain.admission.checkSignedFee(tx);
    return this.chain.admission.sendSigned(signWith(tx, privateKey));
  }

  async signTransaction(req: CallRequest & { readonly from: Addr }, privateKey: Uint8Array): Promise<TxEnvelope> {
    const tx = await this.#unsigned(req);
    this.chain.admission.checkSignedFee(tx);
    const signed = signWith(tx, privateKey);
    return { raw: signed.serialize(), tx: txView(signed) };
  }

  async fillTransaction(req: CallRequest, signal?: StopSignal): Promise<TxEnvelope> {
    const from = req.from ?? ZERO_ADDRESS;
    const tx = await this.#unsigned({ ...req, from }, signal);
    const raw = tx.serialize();
    return { raw, tx: unsignedTxView(tx, from, raw) };
  }

  /** `req` with nonce, gas, fees and chain ID filled as geth's setDefaults does, unsigned (legacy with gasPrice, 2930 with an access list too, else 1559). */
  async #unsigned(req: CallRequest & { readonly from: Addr }, signal?: StopSignal): Promise<TypedTransaction> {
    this.#checkRequest(req);
    if (!req.to && (req.data?.length ?? 0) === 0) throw rpcErr('contract creation without any data provided');
    const nonce = req.nonce ?? (await this.nonce(req.from, 'pending'));
    const gasLimit = req.gas ?? (await this.estimateGas(req, 'latest', undefined, signal));
    const base = { nonce, gasLimit, to: req.to ?? undefined, value: req.value ?? 0n, data: req.data ?? new Uint8Array(), chainId: this.chainId };
    let txData: Record<string, unknown>;
    if (req.gasPrice !== undefined) {
      txData = req.accessList ? { ...base, type: 1, gasPrice: req.gasPrice, accessList: toAccessList(req) } : { ...base, type: 0, gasPrice: req.gasPrice };
    } else {
      const tip = req.maxPriorityFeePerGas ?? this.chain.fees.suggestedTip();
      const maxFee = req.maxFeePerGas ?? 2n * (await this.chain.nextBaseFee()) + tip;
      if (maxFee < tip) throw rpcErr(`maxFeePerGas (${maxFee}) < maxPriorityFeePerGas (${tip})`);
      txData = { ...base, type: 2, maxFeePerGas: maxFee, maxPriorityFeePerGas: tip, ...(req.accessList ? { accessList: toAccessList(req) } : {}) };
    }
    return buildTx(txData as Record<string, unknown> & { gasLimit: bigint }, this.chain.txCommon);
  }

  // ------------------------------------------------------------------ the pool (txpool_, eth_pendingTransactions, eth_getRawTransactionByHash)

  poolContent(from?: Addr): PoolContent {
    const { pending, queued } = this.chain.mempool.content(from && toHex(from));
    return { pending: pending.map((e) => txView(e.tx)), queued: queued.map((e) => txView(e.tx)) };
  }

  poolStatus(): { pending: number; queued: number } {
    const s = this.chain.mempool.stats();
    return { pending: s.executable, queued: s.future };
  }

  async rawTransaction(hash: Hash): Promise<Uint8Array | undefined> {
    const loc = await this.chain.txLocation(hash);
    if (loc) {
      const tx = (await this.chain.acceptedAt(loc.number))?.eth.transactions[loc.index];
      if (tx) return tx.serialize();
    }
    return this.chain.mempool.get(toHex(hash))?.tx.serialize();
  }

  // ------------------------------------------------------------------ execution

  /** rpcGasCap (default 50M, as coreth). */
  #rpcGasCap(): bigint {
    return this.chain.options.rpcGasCap ?? 50_000_000n;
  }

  #gasCap(b: EvmBlock): bigint {
    const cap = this.#rpcGasCap();
    return b.eth.header.gasLimit < cap ? b.eth.header.gasLimit : cap;
  }

  /** The gas price a call pays (0 when it names none: no balance needed for gas, as geth). */
  #callPrice(req: CallRequest, baseFee: bigint): bigint {
    if (req.gasPrice !== undefined) return req.gasPrice;
    if (req.maxFeePerGas !== undefined) {
      const tipped = baseFee + (req.maxPriorityFeePerGas ?? 0n);
      return tipped < req.maxFeePerGas ? tipped : req.maxFeePerGas;
    }
    return 0n;
  }

  async call(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, signal?: StopSignal, blockOverrides?: BlockOverrides): Promise<CallResult> {
    const b = await this.#resolveOrThrow(ref);
    this.#checkRequest(req);
    // The block the EVM sees: `b`, or `b` with the request's block overrides (test: simulate.test.ts "eth_call with block overrides").
    const ctxBlock = overriddenBlock(b.eth, blockOverrides, this.chain.blockOpts);
    const header = ctxBlock.header;
    const cap = this.#rpcGasCap();
    // geth's: the cap when none is given (here not above the block's), a given gas above the cap capped.
    const gasLimit = req.gas === undefined ? (header.gasLimit < cap ? header.gasLimit : cap) : req.gas > cap ? cap : req.gas;
    const caller = new Address(req.from ?? ZERO_ADDRESS);
    const gasPrice = this.#callPrice(req, header.baseFeePerGas ?? 0n);
    const value = req.value ?? 0n;
    if (this.chain.rules) await this.#registerBlockInfo(b, ctxBlock);
    return this.#execute(b, signal, async ({ sm, vm, guard }) => {
      await vm.evm.journal.checkpoint();
      try {
        if (overrides) await applyOverrides(sm, overrides);
        if (gasPrice > 0n || value > 0n) {
          const have = (await sm.getAccount(caller))?.balance ?? 0n;
          const want = gasLimit * gasPrice + value;
          if (have < want) throw rpcErr(`insufficient funds for gas * price + value: address ${caller.toString()} have ${have} want ${want}`);
        }
        const res = await vm.evm.runCall({
          caller,
          origin: caller,
          ...(req.to ? { to: new Address(req.to) } : {}),
          gasLimit,
          gasPrice,
          value,
          data: req.data ?? new Uint8Array(),
          block: ctxBlock,
        });
        const er = res.execResult;
        if (guard.expired) throw rpcErr(guard.message);
        if (er.exceptionError) {
          const kind = er.exceptionError.error === 'revert' ? 'revert' : 'error';
          return { returnData: er.returnValue, gasUsed: er.executionGasUsed, error: { kind, message: kind === 'revert' ? 'execution reverted' : er.exceptionError.error } };
        }
        return { returnData: er.returnValue, gasUsed: er.executionGasUsed };
      } finally {
        await vm.evm.journal.revert();
        vm.evm.journal.cleanJournal();
      }
    });
  }

  /**
   * geth's checks of a call's request before it runs, with its texts (ethereumjs' tx constructor
   * throws plain errors for these): fee cap under the tip, and a creation's initcode (EIP-3860).
   */
  #checkRequest(req: CallRequest): void {
    if (req.maxFeePerGas !== undefined && req.maxPriorityFeePerGas !== undefined && req.maxFeePerGas < req.maxPriorityFeePerGas) {
      throw rpcErr(`maxFeePerGas (${req.maxFeePerGas}) < maxPriorityFeePerGas (${req.maxPriorityFeePerGas})`);
    }
    const max = Number(this.chain.common.param('maxInitCodeSize'));
    const size = req.data?.length ?? 0;
    if (!req.to && this.chain.common.isActivatedEIP(3860) && size > max) throw rpcErr(`max initcode size exceeded: code size ${size} limit ${max}`);
  }

  #callTimeoutMs(): number {
    return this.chain.options.rpcEvmTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  async estimateGas(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, signal?: StopSignal, blockOverrides?: BlockOverrides): Promise<bigint> {
    const b = await this.#resolveOrThrow(ref);
    this.#checkRequest(req);
    const priced = req.gasPrice !== undefined || req.maxFeePerGas !== undefined;
    const baseFee = blockOverrides?.baseFeePerGas ?? b.eth.header.baseFeePerGas ?? 0n;
    const from = new Address(req.from ?? ZERO_ADDRESS);
    const blockCap = this.#gasCap(b);
    const cap = blockOverrides?.gasLimit !== undefined && blockOverrides.gasLimit < blockCap ? blockOverrides.gasLimit : blockCap;
    let hi = req.gas !== undefined && req.gas < cap ? req.gas : cap;
    // Context block: the next block's number and time, no base fee unless the request pays one; then
    // the request's block overrides (a base fee only for a priced request: an unpriced one runs at 0).
    const hdr = nextHeaderData(b.eth, b.eth.header.timestamp, await this.chain.headerFieldsOn(b.eth, b.eth.header.timestamp));
    const { baseFeePerGas: _baseFee, ...otherOverrides } = blockOverrides ?? {};
    const ctxBlock = overriddenBlock(
      createBlock({ header: { ...hdr, baseFeePerGas: priced ? baseFee : 0n, gasLimit: cap > (hdr.gasLimit as bigint) ? cap : hdr.gasLimit } }, this.chain.blockOpts),
      otherOverrides,
      this.chain.blockOpts,
    );
    if (this.chain.rules) withBlockInfo(ctxBlock, b.eth.header.timestamp);
    const makeTx = (gas: bigint): TypedTransaction => {
      const base = { nonce: 0n, gasLimit: gas, value: req.value ?? 0n, data: req.data ?? new Uint8Array(), chainId: this.chainId, ...(req.to ? { to: req.to } : {}) };
      const data =
        req.gasPrice !== undefined
          ? { ...base, type: 1, gasPrice: req.gasPrice, accessList: toAccessList(req) }
          : { ...base, type: 2, maxFeePerGas: req.maxFeePerGas ?? 0n, maxPriorityFeePerGas: req.maxPriorityFeePerGas ?? 0n, accessList: toAccessList(req) };
      const tx = createTx(data as never, { common: this.chain.common, freeze: false }) as TypedTransaction;
      (tx as { getSenderAddress: () => Address }).getSenderAddress = () => from;
      return tx;
    };
    return this.#execute(b, signal, async ({ sm, vm, guard }) => {
      const run = async (gas: bigint): Promise<{ ok: true; r: RunTxResult } | { ok: false; r?: RunTxResult; err?: unknown }> => {
        let outcome: { ok: true; r: RunTxResult } | { ok: false; r?: RunTxResult; err?: unknown };
        await vm.evm.journal.checkpoint();
        try {
          if (overrides) await applyOverrides(sm, overrides);
          const tx = makeTx(gas);
          const r = await runTx(vm, { tx, block: ctxBlock, skipNonce: true, skipBalance: !priced && (req.value ?? 0n) === 0n, skipBlockGasLimitValidation: true, skipHardForkValidation: true });
          outcome = r.execResult.exceptionError ? { ok: false, r } : { ok: true, r };
        } catch (err) {
          outcome = { ok: false, err };
        } finally {
          await vm.evm.journal.revert();
          vm.evm.journal.cleanJournal();
        }
        if (guard.expired) throw rpcErr(guard.message);
        return outcome;
      };
      let intrinsic: bigint;
      try {
        intrinsic = makeTx(hi).getIntrinsicGas();
      } catch (e) {
        throw rpcErr(`invalid transaction: ${shortReason(e)}`);
      }
      if (hi < intrinsic) throw rpcErr(`intrinsic gas too low: gas ${hi}, minimum needed ${intrinsic}`);
      const first = await run(hi);
      if (!first.ok) {
        if (first.r?.execResult.exceptionError?.error === 'revert') throw revertError(first.r.execResult.returnValue);
        // A halt the chain rules decided (a refused create, a failing stateful precompile): their text, as geth.
        if (first.r?.execResult.exceptionError instanceof RulesHalt) throw rpcErr(first.r.execResult.exceptionError.error);
        if (first.r) throw rpcErr(`gas required exceeds allowance (${hi})`);
        throw estimateFailure(first.err, from);
      }
      // Nothing ran beyond the intrinsic cost (a plain transfer to an account without code): that is
      // the answer, exactly (geth's shortcut; the search below stops within 1.5 %).
      if (first.r.totalGasSpent === intrinsic && first.r.gasRefund === 0n) return intrinsic;
      let lo = intrinsic - 1n;
      const used = first.r.totalGasSpent + first.r.gasRefund;
      // geth's optimistic guess: what it used plus the 63/64 rule's reserve and a call stipend.
      const guess = ((used + 2300n) * 64n) / 63n;
      if (guess < hi) {
        const g = await run(guess);
        if (g.ok) hi = guess;
        else lo = guess;
      }
      if (used - 1n > lo) lo = used - 1n;
      while (hi - lo > 1n) {
        if ((hi - lo) * 1000n < hi * 15n) break; // within 1.5 %, as geth
        const mid = (hi + lo) / 2n;
        if ((await run(mid)).ok) hi = mid;
        else lo = mid;
      }
      return hi;
    });
  }

  async createAccessList(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, signal?: StopSignal): Promise<AccessListResult> {
    const b = await this.#resolveOrThrow(ref);
    this.#checkRequest(req);
    const from = new Address(req.from ?? ZERO_ADDRESS);
    const cap = this.#rpcGasCap();
    const gas = req.gas === undefined ? this.#gasCap(b) : req.gas > cap ? cap : req.gas;
    const value = req.value ?? 0n;
    // The block itself with no base fee: the call pays no gas price, as geth runs it.
    const ctxBlock = overriddenBlock(b.eth, { baseFeePerGas: 0n }, this.chain.blockOpts);
    if (this.chain.rules) await this.#registerBlockInfo(b, ctxBlock);
    return this.#execute(b, signal, async ({ sm, vm, guard }) => {
      const withOverrides = async <T>(fn: () => Promise<T>): Promise<T> => {
        await vm.evm.journal.checkpoint();
        try {
          if (overrides) await applyOverrides(sm, overrides);
          return await fn();
        } finally {
          await vm.evm.journal.revert();
          vm.evm.journal.cleanJournal();
        }
      };
      const sender = await withOverrides(async () => (await sm.getAccount(from)) ?? new Account());
      const nonce = req.nonce ?? sender.nonce;
      if (sender.balance < value) throw rpcErr(`insufficient funds for gas * price + value: address ${from.toString()} have ${sender.balance} want ${value}`);
      const to = req.to ? toHex(req.to) : toHex(createContractAddress(from, nonce).bytes);
      const excluded = new Set([toHex(from.bytes), to, ...vm.evm.precompiles.keys()]);
      return findAccessList(req.accessList ?? [], excluded, (accessList, tracer) =>
        withOverrides(async () => {
          const tx = callTx(req, { from, gas, nonce, chainId: this.chainId, common: this.chain.common, accessList, free: true });
          const unlisten = listenToEvm(vm.evm, { step: tracer.onStep });
          let r: RunTxResult;
          try {
            r = await runTx(vm, { tx, block: ctxBlock, skipNonce: true, skipBlockGasLimitValidation: true, skipHardForkValidation: true });
          } catch (e) {
            if (guard.expired) throw rpcErr(guard.message);
            throw rpcErr(`failed to apply transaction: ${shortReason(e)}`);
          } finally {
            unlisten();
          }
          if (guard.expired) throw rpcErr(guard.message);
          const err = r.execResult.exceptionError;
          return { gasUsed: r.totalGasSpent, ...(err && { error: err.error === 'revert' ? 'execution reverted' : err.error }) };
        }),
      );
    });
  }

  async simulate(req: SimulateRequest, ref: BlockRef, signal?: StopSignal): Promise<readonly SimulatedBlock[]> {
    const b = await this.#resolveOrThrow(ref);
    const sim = new Simulation(
      {
        common: this.chain.common,
        blockOpts: this.chain.blockOpts,
        chainId: this.chainId,
        fees: this.chain.fees,
        hasRules: this.chain.rules !== undefined,
        creditBaseFee: this.chain.rules?.creditBaseFee ?? this.chain.fees.creditBaseFee ?? false,
        gasBudget: this.#rpcGasCap(),
        maxInitCodeSize: Number(this.chain.common.param('maxInitCodeSize')),
        applyOverrides,
      },
      { block: b.eth },
      req,
    );
    if (signal?.aborted) throw signal.reason;
    try {
      // A VM of its own whose writes stay in memory (the simulated blocks' state roots), within the call timeout.
      return await this.chain.reader.scratch(
        b.eth.header.stateRoot,
        async (n) => sim.hashes.get(n),
        (v) => v.guard.run(this.#callTimeoutMs(), () => sim.run(v), signal),
      );
    } catch (e) {
      throw signal?.aborted ? signal.reason : e;
    }
  }

  // ------------------------------------------------------------------ debug_ (tracing/chain-traces.ts)

  traceTransaction(hash: Hash, req: TraceRequest, signal?: StopSignal): Promise<string> {
    return this.#traces.traceTransaction(hash, req, signal);
  }

  traceBlock(ref: TraceBlockRef, req: TraceRequest, signal?: StopSignal): Promise<readonly TxTraceJson[]> {
    return this.#traces.traceBlock(ref, req, signal);
  }

  traceCall(call: CallRequest, ref: BlockRef, req: TraceRequest, overrides?: StateOverrides, blockOverrides?: BlockOverrides, signal?: StopSignal): Promise<string> {
    return this.#traces.traceCall(call, ref, req, overrides, blockOverrides, signal);
  }

  rawHeader(ref: BlockRef): Promise<Uint8Array | undefined> {
    return this.#traces.rawHeader(ref);
  }

  rawBlock(ref: BlockRef): Promise<Uint8Array | undefined> {
    return this.#traces.rawBlock(ref);
  }

  rawReceipts(ref: BlockRef): Promise<readonly Uint8Array[] | undefined> {
    return this.#traces.rawReceipts(ref);
  }

  // ------------------------------------------------------------------ fees and status

  async gasPrice(): Promise<bigint> {
    return (await this.chain.nextBaseFee()) + this.chain.fees.suggestedTip();
  }

  async maxPriorityFeePerGas(): Promise<bigint> {
    return this.chain.fees.suggestedTip();
  }

  async feeHistory(blockCount: number, newest: BlockRef, percentiles: readonly number[]): Promise<FeeHistory> {
    const last = await this.#resolveOrThrow(newest);
    const count = Math.max(0, Math.min(blockCount, 1024, last.height + 1));
    const blocks: EvmBlock[] = [];
    for (let n = BigInt(last.height); blocks.length < count; n--) {
      const b = await this.chain.acceptedAt(n);
      if (!b) break;
      blocks.unshift(b);
    }
    const baseFeePerGas = blocks.map((b) => b.eth.header.baseFeePerGas ?? 0n);
    baseFeePerGas.push((await this.chain.headerFieldsOn(last.eth, last.eth.header.timestamp)).baseFeePerGas);
    const gasUsedRatio = blocks.map((b) => (b.eth.header.gasLimit === 0n ? 0 : Number(b.eth.header.gasUsed) / Number(b.eth.header.gasLimit)));
    const out: FeeHistory = { oldestBlock: blocks.length ? blocks[0]!.eth.header.number : BigInt(last.height) + 1n, baseFeePerGas, gasUsedRatio };
    if (percentiles.length === 0) return out;
    const reward = blocks.map((b) => {
      const baseFee = b.eth.header.baseFeePerGas ?? 0n;
      const items = b.eth.transactions
        .map((tx, i) => ({ tip: effectiveGasPrice(tx, baseFee) - baseFee, gas: b.execution!.receipts[i]?.gasUsed ?? 0n }))
        .sort((x, y) => (x.tip < y.tip ? -1 : x.tip > y.tip ? 1 : 0));
      if (items.length === 0) return percentiles.map(() => 0n);
      const total = items.reduce((s, x) => s + x.gas, 0n);
      return percentiles.map((p) => {
        const threshold = (total * BigInt(Math.round(p * 100))) / 10_000n;
        let acc = 0n;
        for (const it of items) {
          acc += it.gas;
          if (acc >= threshold) return it.tip;
        }
        return items[items.length - 1]!.tip;
      });
    });
    return { ...out, reward };
  }

  syncing(): false {
    return false;
  }

  peerCount(): number {
    return 0;
  }
}

function estimateFailure(err: unknown, from: Address): EvmRpcError {
  if (err instanceof EvmRpcError) return err;
  const m = err instanceof Error ? err.message : String(err);
  if (/enough funds|insufficient/i.test(m)) return rpcErr(`insufficient funds for gas * price + value: address ${from.toString()}`);
  return rpcErr(shortReason(err));
}

function toAccessList(req: CallRequest): Array<[Uint8Array, Uint8Array[]]> {
  return (req.accessList ?? []).map((e) => [e.address, [...e.storageKeys]]);
}

function bytesEq(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function applyOverrides(sm: StateView['sm'], overrides: StateOverrides): Promise<void> {
  for (const [addrHex, o] of overrides) {
    const address = new Address(fromHex(addrHex));
    const acct = (await sm.getAccount(address)) ?? new Account();
    if (o.balance !== undefined) acct.balance = o.balance;
    if (o.nonce !== undefined) acct.nonce = o.nonce;
    await sm.putAccount(address, acct);
    if (o.code !== undefined) await sm.putCode(address, o.code);
    if (o.state) {
      await sm.clearStorage(address);
      for (const [slot, v] of o.state) await sm.putStorage(address, setLengthLeft(hexBytes(slot), 32), stripZeros(v));
    }
    if (o.stateDiff) for (const [slot, v] of o.stateDiff) await sm.putStorage(address, setLengthLeft(hexBytes(slot), 32), stripZeros(v));
  }
}

function hexBytes(s: string): Uint8Array {
  return fromHex(s);
}

function stripZeros(v: Uint8Array): Uint8Array {
  let i = 0;
  while (i < v.length && v[i] === 0) i++;
  return v.subarray(i);
}

/** Skips blocks whose bloom cannot hold the filter's addresses/topics. */
function bloomMayMatch(bloomBits: Uint8Array, filter: LogFilter): boolean {
  const has = (e: Uint8Array) => bloomHas(bloomBits, e);
  if (filter.addresses.length > 0 && !filter.addresses.some(has)) return false;
  for (const alts of filter.topics) if (alts !== null && alts.length > 0 && !alts.some(has)) return false;
  return true;
}

/** Ethereum's 2048-bit bloom membership (3 bits of keccak(e)). */
function bloomHas(bits: Uint8Array, e: Uint8Array): boolean {
  const h = keccak256(e);
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i]! << 8) | h[i + 1]!) & 2047;
    const byte = 256 - 1 - (bit >> 3);
    if ((bits[byte]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}
