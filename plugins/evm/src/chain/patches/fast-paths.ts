/**
 * Two hot spots of @ethereumjs' interpreter in an ERC-20 eth_call (plugins/evm/bench/call-bench.mjs),
 * answered the same way for less (test: fast-paths.test.ts):
 * - MSTORE and MLOAD convert a 256-bit word to and from bytes through a hex string; here four
 *   64-bit halves go through a DataView. The opcode table is a Map exported by the EVM's opcode
 *   module, copied into each EVM when it is made, so it is changed once before any EVM is made
 *   (evm-internals.ts).
 * - `Common.isActivatedEIP` runs `includes` over the active EIP list, several times per opcode;
 *   here a bitmap per list answers. Common replaces the list by a new array whenever its hardfork
 *   or EIPs change, so a bitmap kept beside the array it was made from is never stale.
 */
import type { Common } from '@ethereumjs/common';
import { importEvmInternal } from './evm-internals.js';

interface Stack {
  pop(): bigint;
  popN(n: number): bigint[];
  push(v: bigint): void;
}
interface Memory {
  write(offset: number, size: number, value: Uint8Array): void;
  read(offset: number, size: number, avoidCopy?: boolean): Uint8Array;
}
interface RunState {
  readonly stack: Stack;
  readonly memory: Memory;
}
type Handler = (runState: RunState) => void;

const MSTORE = 0x52;
const MLOAD = 0x51;

/** One scratch word: Memory.write copies it, and handlers never interleave (they are synchronous). */
const scratch = new Uint8Array(32);
const scratchView = new DataView(scratch.buffer);

/** The 32 big-endian bytes of `word` (< 2^256; setBigUint64 keeps the low 64 bits of each shift). */
export function wordBytes(word: bigint, out: Uint8Array = new Uint8Array(32)): Uint8Array {
  const v = out === scratch ? scratchView : new DataView(out.buffer, out.byteOffset, 32);
  v.setBigUint64(0, word >> 192n);
  v.setBigUint64(8, word >> 128n);
  v.setBigUint64(16, word >> 64n);
  v.setBigUint64(24, word);
  return out;
}

/** The word whose 32 big-endian bytes are `b`. */
export function wordOf(b: Uint8Array): bigint {
  const v = new DataView(b.buffer, b.byteOffset, 32);
  return (v.getBigUint64(0) << 192n) | (v.getBigUint64(8) << 128n) | (v.getBigUint64(16) << 64n) | v.getBigUint64(24);
}

/** MSTORE as the stock handler (pops offset and word, writes the word at offset), without the hex round trip. */
export const fastMstore: Handler = (runState) => {
  const [offset, word] = runState.stack.popN(2);
  runState.memory.write(Number(offset), 32, wordBytes(word!, scratch));
};

/** MLOAD as the stock handler (pops offset, pushes the word at offset), without the hex round trip. */
export const fastMload: Handler = (runState) => {
  const pos = runState.stack.pop();
  runState.stack.push(wordOf(runState.memory.read(Number(pos), 32, true)));
};

let installed: Promise<boolean> | undefined;

async function load(): Promise<boolean> {
  try {
    const mod = await importEvmInternal<{ handlers?: Map<number, Handler> }>('opcodes/functions.js');
    const table = mod.handlers;
    if (!(table instanceof Map) || typeof table.get(MSTORE) !== 'function' || typeof table.get(MLOAD) !== 'function') return false;
    table.set(MSTORE, fastMstore);
    table.set(MLOAD, fastMload);
    return true;
  } catch {
    return false;
  }
}

/** Installs the fast MSTORE and MLOAD once, for EVMs made afterwards (false when the table could not be found: nothing changes). */
export function installFastOpcodes(): Promise<boolean> {
  return (installed ??= load());
}

const LIST = Symbol('eip list');
const BITS = Symbol('eip bitmap');
type EipCommon = Common & { _activatedEIPsCache: number[]; [LIST]?: number[]; [BITS]?: Uint8Array };

function isActivatedEIP(this: EipCommon, eip: number): boolean {
  const list = this._activatedEIPsCache;
  let bits = this[BITS];
  if (this[LIST] !== list || bits === undefined) {
    bits = new Uint8Array(1 + Math.max(0, ...list));
    for (const e of list) bits[e] = 1;
    this[LIST] = list;
    this[BITS] = bits;
  }
  return bits[eip] === 1;
}

/** Makes `common` (and its later copies) answer isActivatedEIP from a bitmap; returns it. */
export function withFastEipLookup<C extends Common>(common: C): C {
  if (Array.isArray((common as unknown as EipCommon)._activatedEIPsCache)) common.isActivatedEIP = isActivatedEIP;
  return common;
}
