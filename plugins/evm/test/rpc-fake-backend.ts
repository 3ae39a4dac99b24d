/**
 * Test helpers for the JSON-RPC front end (not shipped): an in-memory EvmBackend with a hand-made
 * chain, a manual clock, a logger that records lines, a loopback node:http server around the
 * front end, a fake WebSocketConnection.
 */
import { createServer, type Server } from 'node:http';
import { Subject } from 'rxjs';
import * as assert from 'uvu/assert';
import { MemoryStore, toHex, type Clock, type LogFields, type Logger, type WebSocketConnection } from '@cornice/sdk';
import {
  EvmRpcError,
  createEthRpc,
  type AcceptedBlock,
  type AccessListResult,
  type AccountProofView,
  type Address,
  type BlockOverrides,
  type BlockRef,
  type BlockView,
  type CallRequest,
  type CallResult,
  type EthRpc,
  type EthRpcOptions,
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
  type TraceBlockRef,
  type TraceRequest,
  type TxEnvelope,
  type TxLocation,
  type TxTraceJson,
  type TxView,
} from '../src/index.js';

/** 32 (or `n`) bytes all equal to `b`. */
export function filled(b: number, n = 32): Uint8Array {
  return new Uint8Array(n).fill(b);
}

export const hex = (b: Uint8Array): string => '0x' + toHex(b);

export const ALICE = filled(0xa1, 20);
export const BOB = filled(0xb0, 20);
export const TOKEN = filled(0x70, 20);
export const TRANSFER_TOPIC = filled(0xdd);

let txSeq = 1;

/** A signed EIP-1559 transfer with a distinct hash. */
export function makeTx(over: Partial<TxView> = {}): TxView {
  const n = txSeq++;
  const hash = new Uint8Array(32);
  new DataView(hash.buffer).setUint32(28, n);
  hash[0] = 0x7e;
  return {
    hash,
    type: 2,
    from: ALICE,
    to: BOB,
    nonce: BigInt(n),
    value: 1000n,
    input: new Uint8Array(0),
    gas: 21000n,
    gasPrice: 25_000_000_000n,
    maxFeePerGas: 50_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    accessList: [],
    chainId: 43110n,
    v: 1n,
    r: 0x1234n,
    s: 0x5678n,
    yParity: 1,
    ...over,
  };
}

export class ManualClock implements Clock {
  constructor(public t = 1_700_000_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface LogLine {
  level: string;
  msg: string;
  fields?: LogFields;
}

export function recordingLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  const at =
    (level: string) =>
    (msg: string, fields?: LogFields): void =>
      void lines.push({ level, msg, ...(fields && { fields }) });
  const log: Logger & { lines: LogLine[] } = {
    lines,
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: () => log,
  };
  return log;
}

/** As the chain backend (and geth): by hash "header for hash not found", else "header not found". */
const headerNotFound = (ref: BlockRef): EvmRpcError => new EvmRpcError(-32000, typeof ref === 'object' ? 'header for hash not found' : 'header not found');

/** An in-memory chain: blocks made with `mine`, state in maps, every call recorded. */
export class FakeBackend implements EvmBackend {
  readonly chainId = 43110n;
  readonly networkId = 1n;
  readonly accepted$ = new Subject<AcceptedBlock>();
  readonly pending$ = new Subject<TxView>();
  readonly blocks: AcceptedBlock[] = [];
  readonly balances = new Map<string, bigint>();
  readonly codes = new Map<string, Uint8Array>();
  readonly calls: Array<{ method: string; args: unknown[] }> = [];
  readonly sent: Array<{ req: CallRequest; key: Uint8Array }> = [];
  readonly pool: TxView[] = [];
  /** Future txs (after a nonce gap): txpool_content's "queued". */
  readonly queued: TxView[] = [];
  /** Encodings by lower-case hex hash (eth_getRawTransactionByHash). */
  readonly raws = new Map<string, Uint8Array>();
  callResult: CallResult = { returnData: Uint8Array.of(0, 0, 0, 42), gasUsed: 21_000n };
  accessListResult: AccessListResult = { accessList: [{ address: TOKEN, storageKeys: [filled(1)] }], gasUsed: 25_300n };
  /** When set, every method throws it (bugs, timeouts). */
  failWith: (() => unknown) | undefined;
  peers = 3;
  /** False: calls are not recorded (benchmarks). */
  recording = true;

  constructor() {
    this.mine([]);
  }

  #check(method: string, args: unknown[]): void {
    if (this.recording) this.calls.push({ method, args });
    if (this.failWith) throw this.failWith();
  }

  /** Accepts a block with `txs` (each with `logsPer` logs from TOKEN) and emits it. */
  mine(txs: TxView[], logsPer = 0): AcceptedBlock {
    const number = BigInt(this.blocks.length);
    const hash = filled(0xb1, 32);
    new DataView(hash.buffer).setUint32(28, Number(number));
    const parentHash = this.blocks.length ? this.blocks[this.blocks.length - 1]!.block.header.hash : new Uint8Array(32);
    let logIndex = 0;
    let cumulative = 0n;
    const receipts: ReceiptView[] = txs.map((tx, i) => {
      cumulative += 21_000n;
      const logs: LogView[] = Array.from({ length: logsPer }, (_, j) => ({
        address: TOKEN,
        topics: [TRANSFER_TOPIC, filled(j + 1)],
        data: Uint8Array.of(j),
        blockNumber: number,
        blockHash: hash,
        transactionHash: tx.hash,
        transactionIndex: i,
        logIndex: logIndex++,
        removed: false,
      }));
      return {
        transactionHash: tx.hash,
        transactionIndex: i,
        blockHash: hash,
        blockNumber: number,
        from: tx.from,
        to: tx.to,
        cumulativeGasUsed: cumulative,
        gasUsed: 21_000n,
        effectiveGasPrice: 26_000_000_000n,
        contractAddress: tx.to ? null : filled(0xcc, 20),
        logs,
        logsBloom: new Uint8Array(256),
        status: 1,
        type: tx.type,
      };
    });
    const block: BlockView = {
      header: {
        number,
        hash,
        parentHash,
        timestamp: 1_700_000_000n + number,
        stateRoot: filled(0x51),
        transactionsRoot: filled(0x52),
        receiptsRoot: filled(0x53),
        logsBloom: new Uint8Array(256),
        miner: new Uint8Array(20),
        difficulty: 1n,
        gasLimit: 15_000_000n,
        gasUsed: cumulative,
        baseFeePerGas: 25_000_000_000n,
        extraData: new Uint8Array(0),
        mixHash: new Uint8Array(32),
        nonce: new Uint8Array(8),
        sha3Uncles: filled(0x1d),
        size: 600n,
      },
      transactions: txs,
    };
    const accepted = { block, receipts };
    this.blocks.push(accepted);
    this.accepted$.next(accepted);
    return accepted;
  }

  /** Admits a tx to the pool and emits it. */
  admit(tx: TxView): void {
    this.pool.push(tx);
    this.pending$.next(tx);
  }

  #resolve(ref: BlockRef): AcceptedBlock | undefined {
    if (typeof ref === 'bigint') return this.blocks[Number(ref)];
    if (typeof ref === 'object') return this.blocks.find((b) => toHex(b.block.header.hash) === toHex(ref.hash));
    if (ref === 'earliest') return this.blocks[0];
    return this.blocks[this.blocks.length - 1];
  }

  #stateAt(ref: BlockRef): void {
    if (!this.#resolve(ref)) throw headerNotFound(ref);
  }

  blockNumber(): bigint {
    this.#check('blockNumber', []);
    return BigInt(this.blocks.length - 1);
  }
  async block(ref: BlockRef): Promise<BlockView | undefined> {
    this.#check('block', [ref]);
    return this.#resolve(ref)?.block;
  }
  async balance(address: Address, ref: BlockRef): Promise<bigint> {
    this.#check('balance', [address, ref]);
    this.#stateAt(ref);
    return this.balances.get(toHex(address)) ?? 0n;
  }
  async nonce(address: Address, ref: BlockRef): Promise<bigint> {
    this.#check('nonce', [address, ref]);
    this.#stateAt(ref);
    return ref === 'pending' ? 7n : 5n;
  }
  async code(address: Address, ref: BlockRef): Promise<Uint8Array> {
    this.#check('code', [address, ref]);
    this.#stateAt(ref);
    return this.codes.get(toHex(address)) ?? new Uint8Array(0);
  }
  async storageAt(address: Address, slot: Hash, ref: BlockRef): Promise<Hash> {
    this.#check('storageAt', [address, slot, ref]);
    this.#stateAt(ref);
    return filled(slot[31]!);
  }
  /** eth_getProof: the balance map's balance, slot i's value its last byte, one made-up node per proof. */
  async proof(address: Address, slots: readonly Hash[], ref: BlockRef, signal?: StopSignal): Promise<AccountProofView> {
    this.#check('proof', [address, slots, ref, signal]);
    this.#stateAt(ref);
    return {
      balance: this.balances.get(toHex(address)) ?? 0n,
      nonce: 5n,
      codeHash: filled(0xc0),
      storageHash: filled(0x5a),
      accountProof: [filled(0xf1, 40), filled(0xf2, 40)],
      storageProof: slots.map((slot) => ({ value: BigInt(slot[31]!), proof: [filled(slot[31]!, 33)] })),
    };
  }
  async transaction(hash: Hash): Promise<TxLocation | undefined> {
    this.#check('transaction', [hash]);
    for (const { block } of this.blocks) {
      const index = block.transactions.findIndex((t) => toHex(t.hash) === toHex(hash));
      if (index >= 0) return { tx: block.transactions[index]!, blockHash: block.header.hash, blockNumber: block.header.number, blockTimestamp: block.header.timestamp, index };
    }
    const pending = this.pool.find((t) => toHex(t.hash) === toHex(hash));
    return pending && { tx: pending };
  }
  async receipt(hash: Hash): Promise<ReceiptView | undefined> {
    this.#check('receipt', [hash]);
    for (const { receipts } of this.blocks) {
      const r = receipts.find((x) => toHex(x.transactionHash) === toHex(hash));
      if (r) return r;
    }
    return undefined;
  }
  async blockReceipts(ref: BlockRef): Promise<readonly ReceiptView[] | undefined> {
    this.#check('blockReceipts', [ref]);
    return this.#resolve(ref)?.receipts;
  }
  async logs(filter: LogFilter, _signal?: AbortSignal): Promise<readonly LogView[]> {
    this.#check('logs', [filter]);
    const out: LogView[] = [];
    for (const { block, receipts } of this.blocks) {
      const n = block.header.number;
      if (filter.blockHash ? toHex(filter.blockHash) !== toHex(block.header.hash) : n < filter.fromBlock! || n > filter.toBlock!) continue;
      for (const r of receipts) for (const l of r.logs) out.push(l);
    }
    return out.filter(
      (l) =>
        (filter.addresses.length === 0 || filter.addresses.some((a) => toHex(a) === toHex(l.address))) &&
        filter.topics.every((want, i) => want === null || (l.topics[i] !== undefined && want.some((t) => toHex(t) === toHex(l.topics[i]!)))),
    );
  }
  async sendRawTransaction(raw: Uint8Array): Promise<Hash> {
    this.#check('sendRawTransaction', [raw]);
    if (raw[0] === 0xff) throw new EvmRpcError(-32000, 'insufficient funds for gas * price + value');
    return filled(raw[0]!);
  }
  async sendTransaction(req: CallRequest & { readonly from: Address }, privateKey: Uint8Array): Promise<Hash> {
    this.#check('sendTransaction', [req]);
    this.sent.push({ req, key: privateKey.slice() });
    return filled(0x5e);
  }
  poolContent(from?: Address): PoolContent {
    this.#check('poolContent', [from]);
    const mine = (t: TxView) => from === undefined || toHex(t.from) === toHex(from);
    return { pending: this.pool.filter(mine), queued: this.queued.filter(mine) };
  }
  poolStatus(): { pending: number; queued: number } {
    this.#check('poolStatus', []);
    return { pending: this.pool.length, queued: this.queued.length };
  }
  async rawTransaction(hash: Hash): Promise<Uint8Array | undefined> {
    this.#check('rawTransaction', [hash]);
    return this.raws.get(toHex(hash));
  }
  async fillTransaction(req: CallRequest): Promise<TxEnvelope> {
    this.#check('fillTransaction', [req]);
    const tx = makeTx({ from: req.from ?? new Uint8Array(20), nonce: req.nonce ?? 7n, gas: req.gas ?? 21_000n, v: 0n, r: 0n, s: 0n, yParity: 0 });
    return { raw: Uint8Array.of(2, 0xc1, 0x80), tx };
  }
  async signTransaction(req: CallRequest & { readonly from: Address }, privateKey: Uint8Array): Promise<TxEnvelope> {
    this.#check('signTransaction', [req]);
    this.sent.push({ req, key: privateKey.slice() });
    return { raw: Uint8Array.of(2, 0xc1, 0x01), tx: makeTx({ from: req.from, nonce: req.nonce ?? 0n, gas: req.gas ?? 0n }) };
  }
  async call(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, _signal?: AbortSignal, blockOverrides?: BlockOverrides): Promise<CallResult> {
    this.#check('call', [req, ref, overrides, ...(blockOverrides ? [blockOverrides] : [])]);
    this.#stateAt(ref);
    return this.callResult;
  }
  async estimateGas(req: CallRequest, ref: BlockRef, overrides?: StateOverrides, _signal?: AbortSignal, blockOverrides?: BlockOverrides): Promise<bigint> {
    this.#check('estimateGas', [req, ref, overrides, ...(blockOverrides ? [blockOverrides] : [])]);
    this.#stateAt(ref);
    return 21_000n;
  }
  async createAccessList(req: CallRequest, ref: BlockRef, overrides?: StateOverrides): Promise<AccessListResult> {
    this.#check('createAccessList', [req, ref, overrides]);
    this.#stateAt(ref);
    return this.accessListResult;
  }
  /** What simulate answers (set by a test); by default one empty block per block asked. */
  simulateResult: readonly SimulatedBlock[] | undefined;
  async simulate(req: SimulateRequest, ref: BlockRef): Promise<readonly SimulatedBlock[]> {
    this.#check('simulate', [req, ref]);
    this.#stateAt(ref);
    return this.simulateResult ?? req.blocks.map(() => ({ block: this.blocks.at(-1)!.block, calls: [] }));
  }
  /** What the trace methods answer (JSON text; set by a test). */
  traceJson = '{"gas":21000,"failed":false,"returnValue":"0x","structLogs":[]}';
  /** Runs inside a trace before it answers (a test holds a trace here). */
  traceGate: ((signal?: StopSignal) => Promise<void>) | undefined;
  async traceTransaction(hash: Hash, req: TraceRequest, signal?: StopSignal): Promise<string> {
    this.#check('traceTransaction', [hash, req]);
    await this.traceGate?.(signal);
    return this.traceJson;
  }
  async traceBlock(ref: TraceBlockRef, req: TraceRequest, signal?: StopSignal): Promise<readonly TxTraceJson[]> {
    this.#check('traceBlock', [ref, req]);
    await this.traceGate?.(signal);
    const b = typeof ref === 'object' && 'rlp' in ref ? this.blocks.at(-1) : this.#resolve(ref);
    return (b?.block.transactions ?? []).map((tx) => ({ txHash: tx.hash, json: this.traceJson }));
  }
  async traceCall(call: CallRequest, ref: BlockRef, req: TraceRequest, overrides?: StateOverrides, blockOverrides?: BlockOverrides, signal?: StopSignal): Promise<string> {
    this.#check('traceCall', [call, ref, req, overrides, blockOverrides]);
    await this.traceGate?.(signal);
    return this.traceJson;
  }
  async rawHeader(ref: BlockRef): Promise<Uint8Array | undefined> {
    this.#check('rawHeader', [ref]);
    return ref === 'latest' ? Uint8Array.of(0xc1, 0x01) : undefined;
  }
  async rawBlock(ref: BlockRef): Promise<Uint8Array | undefined> {
    this.#check('rawBlock', [ref]);
    return ref === 'latest' ? Uint8Array.of(0xc2, 0xc0, 0xc0) : undefined;
  }
  async rawReceipts(ref: BlockRef): Promise<readonly Uint8Array[] | undefined> {
    this.#check('rawReceipts', [ref]);
    return ref === 'latest' ? [Uint8Array.of(0x02, 0xc0)] : undefined;
  }
  async gasPrice(): Promise<bigint> {
    this.#check('gasPrice', []);
    return 26_000_000_000n;
  }
  async maxPriorityFeePerGas(): Promise<bigint> {
    this.#check('maxPriorityFeePerGas', []);
    return 1_000_000_000n;
  }
  async feeHistory(blockCount: number, newest: BlockRef, percentiles: readonly number[]): Promise<FeeHistory> {
    this.#check('feeHistory', [blockCount, newest, percentiles]);
    return {
      oldestBlock: 0n,
      baseFeePerGas: [25_000_000_000n, 25_000_000_000n],
      gasUsedRatio: [0.5],
      reward: [percentiles.map(() => 1_000_000_000n)],
    };
  }
  syncing(): false {
    this.#check('syncing', []);
    return false;
  }
  peerCount(): number {
    this.#check('peerCount', []);
    return this.peers;
  }
}

export interface Served {
  readonly url: string;
  readonly rpc: EthRpc;
  readonly backend: FakeBackend;
  readonly clock: ManualClock;
  readonly log: Logger & { lines: LogLine[] };
  readonly store: MemoryStore;
  /** One call; the whole reply (result or error). */
  call(method: string, params?: unknown): Promise<RpcReply>;
  /** One call that must succeed; its result. */
  ok(method: string, params?: unknown[]): Promise<any>;
  /** POSTs `body` as is. */
  post(body: string, headers?: Record<string, string>, method?: string): Promise<{ status: number; text: string; json: any }>;
  close(): Promise<void>;
}

export interface RpcReply {
  jsonrpc: '2.0';
  id: unknown;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

/** The front end over a fake backend, on a loopback node:http server. */
export async function serve(over: Partial<EthRpcOptions> = {}, backend = new FakeBackend()): Promise<Served> {
  const clock = new ManualClock();
  const log = recordingLogger();
  const store = new MemoryStore();
  const rpc = createEthRpc(backend, { clientVersion: 'cornice-evm/test', accounts: store, log, clock, ...over });
  const server: Server = createServer((req, res) => void rpc.http(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/rpc`;
  let id = 1;
  const post = async (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }, method = 'POST') => {
    const res = await fetch(url, { method, headers, ...(method !== 'GET' && { body }) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  };
  const call = async (method: string, params: unknown = []): Promise<RpcReply> => {
    const { json } = await post(JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }));
    return json as RpcReply;
  };
  return {
    url,
    rpc,
    backend,
    clock,
    log,
    store,
    post,
    call,
    async ok(method, params = []) {
      const r = await call(method, params);
      assert.is(r.error, undefined, `${method}: ${JSON.stringify(r.error)}`);
      return r.result;
    },
    async close() {
      rpc.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * With the backend's traces held (traceGate), `first` is sent until it runs in the trace lane and
 * `second` until it waits there; then `third`, whose reply is returned. The traces are then let go
 * and `first` and `second` must answer. For a lane of 1 running and 1 waiting.
 */
export async function pastTheTraceLane(s: Served, first: () => Promise<RpcReply>, second: () => Promise<RpcReply>, third: () => Promise<RpcReply>): Promise<RpcReply> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  s.backend.traceGate = async (_signal?: StopSignal) => held;
  const until = async (ok: () => boolean) => {
    while (!ok()) await new Promise((r) => setImmediate(r));
  };
  const lane = s.rpc.lanes.trace;
  const running = first();
  await until(() => lane.running === 1);
  const waiting = second();
  await until(() => lane.queued === 1);
  const refused = await third();
  s.backend.traceGate = undefined;
  release();
  assert.ok((await running).result);
  assert.ok((await waiting).result);
  return refused;
}

/** A WebSocketConnection the test drives: `receive` plays a client message, `sent` holds what went out. */
export class FakeConnection implements WebSocketConnection {
  readonly sent: string[] = [];
  #onMessage: Array<(text: string) => void> = [];
  #onClose: Array<() => void> = [];
  closed = false;
  closeCode: number | undefined;
  closeReason: string | undefined;

  send(text: string): void {
    if (!this.closed) this.sent.push(text);
  }
  close(code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closeCode = code;
    this.closeReason = reason;
    for (const l of this.#onClose.splice(0)) l();
  }
  onMessage(listener: (text: string) => void): void {
    this.#onMessage.push(listener);
  }
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.#onClose.push(listener);
  }
  receive(text: string): void {
    for (const l of this.#onMessage) l(text);
  }
  /** Everything sent, parsed. */
  get messages(): any[] {
    return this.sent.map((s) => JSON.parse(s));
  }
}
