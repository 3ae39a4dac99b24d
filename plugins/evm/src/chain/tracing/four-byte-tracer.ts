/**
 * geth's 4byteTracer: `{"0x<selector>-<calldata bytes after it>": count}` over every CALL,
 * CALLCODE, DELEGATECALL and STATICCALL with at least 4 bytes of input, the tx's own call
 * included, except calls to a precompile (the chain's own stateful precompiles too) and creations.
 *
 * A call counts once its opcode ran, as geth counts a call it enters: also one that @ethereumjs
 * never starts (too deep, or more value than the caller has), whose input is read from the
 * caller's memory. Keys sorted as geth sorts them.
 * Tests: tracers.test.ts "4byteTracer".
 */
import type { InterpreterStep, Message } from '@ethereumjs/evm';
import type { VM } from '@ethereumjs/vm';
import { OpWatch, type OpEffect } from './op-watch.js';
import type { EvmTracer, TraceContext, TracerFactory } from './tracer.js';

const CALL = 0xf1;
const CALLCODE = 0xf2;
const DELEGATECALL = 0xf4;
const STATICCALL = 0xfa;
const ADDRESS_MASK = (1n << 160n) - 1n;

export const fourByteTracer: TracerFactory = () => new FourByteTracer();

/** True for an address (lower-case hex without 0x) the VM runs as a precompile. */
export function precompileCheck(vm: VM): (unprefixedHex: string) => boolean {
  const precompiles = vm.evm.precompiles;
  return (address) => precompiles.has(address);
}

class FourByteTracer implements EvmTracer {
  readonly #ids = new Map<string, number>();
  #watch: OpWatch | undefined;
  #isPrecompile: (address: string) => boolean = () => false;

  start(ctx: TraceContext): void {
    this.#isPrecompile = precompileCheck(ctx.vm);
    this.#watch = new OpWatch(ctx.vm, { enter: (m) => this.#enter(m), step: (s) => this.#step(s) });
  }

  finish(): unknown {
    this.#watch?.close();
    const out: Record<string, number> = {};
    for (const k of [...this.#ids.keys()].sort()) out[k] = this.#ids.get(k)!;
    return out;
  }

  #count(selector: Uint8Array, rest: number): void {
    const key = `0x${Buffer.from(selector).toString('hex')}-${rest}`;
    this.#ids.set(key, (this.#ids.get(key) ?? 0) + 1);
  }

  #enter(m: Message): void {
    if (m.to === undefined || m.data.length < 4) return;
    if (this.#isPrecompile(Buffer.from(m.codeAddress.bytes).toString('hex'))) return;
    this.#count(m.data.subarray(0, 4), m.data.length - 4);
  }

  /** A call opcode: counted here only if no frame follows it (one that follows is counted by #enter). */
  #step(s: InterpreterStep): OpEffect | undefined {
    const op = s.opcode.code;
    const withValue = op === CALL || op === CALLCODE;
    if (!withValue && op !== DELEGATECALL && op !== STATICCALL) return undefined;
    const stack = s.stack;
    const n = stack.length;
    if (n < (withValue ? 7 : 6)) return undefined;
    const target = (stack[n - 2]! & ADDRESS_MASK).toString(16).padStart(40, '0');
    const offset = stack[n - (withValue ? 4 : 3)]!;
    const size = stack[n - (withValue ? 5 : 4)]!;
    if (size < 4n || size > BigInt(Number.MAX_SAFE_INTEGER) || this.#isPrecompile(target)) return undefined;
    const selector = new Uint8Array(4);
    if (offset < BigInt(s.memory.length)) {
      const start = Number(offset);
      selector.set(s.memory.subarray(start, Math.min(start + 4, s.memory.length)));
    }
    return (entered) => {
      if (!entered) this.#count(selector, Number(size) - 4);
    };
  }
}
