/**
 * eth_simulateV1's `traceTransfers`: the logs of a call with each ETH transfer as an ERC-20
 * Transfer log of 0xeeee…eeee (topics: the Transfer signature, from, to; data: the value), in
 * execution order among the call's own logs, as geth's simulation tracer writes them. Each frame
 * (the call and every inner call or create) keeps its logs; a frame that fails drops them with its
 * inner frames', as the EVM drops their state. A DELEGATECALL moves no ETH (no log).
 *
 * It listens to the VM's message events (frames, the created address) and step events (LOG0-4:
 * their topics from the stack, their data from memory); step events cost a copy of the stack and
 * memory per opcode, so only a request asking for transfers pays it.
 * Test: simulate.test.ts "eth_simulateV1 traceTransfers".
 */
import type { EVMResult, InterpreterStep, Message } from '@ethereumjs/evm';
import type { VM } from '@ethereumjs/vm';
import { listenToEvm } from './evm-events.js';

type RawLog = [Uint8Array, Uint8Array[], Uint8Array];

/** 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE (ERC-7528), the emitter of the transfer logs. */
export const TRANSFER_LOG_ADDRESS = new Uint8Array(20).fill(0xee);
/** keccak256("Transfer(address,address,uint256)"). */
export const TRANSFER_TOPIC = Uint8Array.from(Buffer.from('ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', 'hex'));

const LOG0 = 0xa0;
const LOG4 = 0xa4;
/** A LOG this long cannot be paid for (memory gas): its frame fails, its log is never kept. */
const MAX_LOG_DATA = 16 * 1024 * 1024;

function word(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = n;
  for (let i = 31; i >= 0 && v > 0n; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function addressWord(a: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  out.set(a, 12);
  return out;
}

interface Frame {
  readonly logs: RawLog[];
  /** A create's value, logged once its address is known. */
  pendingCreate?: { readonly from: Uint8Array; readonly value: bigint };
}

export class TransferTracer {
  #frames: Frame[] = [];
  #root: RawLog[] = [];
  /** Stops listening to the VM. */
  readonly close: () => void;

  constructor(vm: VM) {
    this.close = listenToEvm(vm.evm, { beforeMessage: this.#enter, afterMessage: this.#exit, newContract: this.#created, step: this.#step });
  }

  /** The logs of the call just run (none when it failed), and a fresh start for the next. */
  finish(): RawLog[] {
    const logs = this.#root;
    this.#root = [];
    this.#frames = [];
    return logs;
  }

  #top(): Frame | undefined {
    return this.#frames[this.#frames.length - 1];
  }

  #transfer(frame: Frame, from: Uint8Array, to: Uint8Array, value: bigint): void {
    frame.logs.push([TRANSFER_LOG_ADDRESS, [TRANSFER_TOPIC, addressWord(from), addressWord(to)], word(value)]);
  }

  readonly #enter = (m: Message): void => {
    const frame: Frame = { logs: [] };
    this.#frames.push(frame);
    if (m.delegatecall || m.value <= 0n) return;
    if (m.to) this.#transfer(frame, m.caller.bytes, m.to.bytes, m.value);
    else frame.pendingCreate = { from: m.caller.bytes, value: m.value };
  };

  readonly #created = (e: { address: { bytes: Uint8Array } }): void => {
    const frame = this.#top();
    if (!frame?.pendingCreate) return;
    this.#transfer(frame, frame.pendingCreate.from, e.address.bytes, frame.pendingCreate.value);
    delete frame.pendingCreate;
  };

  readonly #exit = (r: EVMResult): void => {
    const frame = this.#frames.pop();
    if (!frame) return;
    const failed = r.execResult.exceptionError !== undefined;
    const parent = this.#top();
    if (!parent) this.#root = failed ? [] : frame.logs;
    else if (!failed) parent.logs.push(...frame.logs);
  };

  readonly #step = (s: InterpreterStep): void => {
    const op = s.opcode.code;
    if (op < LOG0 || op > LOG4) return;
    const frame = this.#top();
    const n = op - LOG0;
    const stack = s.stack;
    if (!frame || stack.length < 2 + n) return;
    const offset = stack[stack.length - 1]!;
    const size = stack[stack.length - 2]!;
    if (size > BigInt(MAX_LOG_DATA) || (size > 0n && offset > BigInt(Number.MAX_SAFE_INTEGER))) return;
    const data = new Uint8Array(Number(size));
    const start = Number(offset);
    if (size > 0n && start < s.memory.length) data.set(s.memory.subarray(start, Math.min(start + data.length, s.memory.length)));
    const topics: Uint8Array[] = [];
    for (let i = 0; i < n; i++) topics.push(word(stack[stack.length - 3 - i]!));
    frame.logs.push([s.address.bytes, topics, data]);
  };
}
