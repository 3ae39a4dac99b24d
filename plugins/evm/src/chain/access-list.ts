/**
 * eth_createAccessList as geth answers it: the call runs with the access list found so far, and
 * again with what that run touched, until a run touches nothing new; the answer is that list and
 * the gas of the run that found nothing new (the tx with the list: 2,400 gas per address and 1,900
 * per storage key in its intrinsic cost, those accounts and slots warm).
 *
 * What counts as touched is geth's access-list tracer's, not @ethereumjs' `reportAccessList` (which
 * reports what the journal warmed: also the coinbase's and the precompiles' warmth rules, and
 * nothing of an address-only access it excludes differently): a storage slot read or written (with
 * its contract's address, even the sender's or the recipient's), and an address named by BALANCE,
 * EXTCODESIZE, EXTCODECOPY, EXTCODEHASH, SELFDESTRUCT or a CALL of any kind, unless it is the
 * sender, the recipient (for a creation, the created address) or a precompile.
 * Tests: simulate.test.ts "eth_createAccessList".
 */
import type { InterpreterStep } from '@ethereumjs/evm';
import type { AccessListEntry, AccessListResult } from '../evm-backend.js';
import { fromHex, toHex } from '@cornice/sdk';
import { rpcErr } from './eth-errors.js';

const SLOAD = 0x54;
const SSTORE = 0x55;
/** BALANCE, EXTCODESIZE, EXTCODECOPY, EXTCODEHASH, SELFDESTRUCT: the address is the top of the stack. */
const ADDRESS_AT_TOP = new Set([0x31, 0x3b, 0x3c, 0x3f, 0xff]);
/** CALL, CALLCODE, DELEGATECALL, STATICCALL: the address is the second item. */
const ADDRESS_SECOND = new Set([0xf1, 0xf2, 0xf4, 0xfa]);

const ADDRESS_MASK = (1n << 160n) - 1n;

function addressHex(word: bigint): string {
  return (word & ADDRESS_MASK).toString(16).padStart(40, '0');
}

function slotHex(word: bigint): string {
  return word.toString(16).padStart(64, '0');
}

/** The accounts and slots one run touched (lower-case hex without 0x), in the order first touched. */
export class AccessListTracer {
  readonly #list = new Map<string, Set<string>>();

  /** `excluded`: lower-case hex addresses without 0x (sender, recipient, precompiles). */
  constructor(
    initial: readonly AccessListEntry[],
    private readonly excluded: ReadonlySet<string>,
  ) {
    for (const e of initial) {
      const address = toHex(e.address);
      if (!excluded.has(address)) this.#addAddress(address);
      for (const k of e.storageKeys) this.#addSlot(address, toHex(k));
    }
  }

  #addAddress(address: string): Set<string> {
    let slots = this.#list.get(address);
    if (!slots) {
      slots = new Set();
      this.#list.set(address, slots);
    }
    return slots;
  }

  #addSlot(address: string, slot: string): void {
    this.#addAddress(address).add(slot);
  }

  /** The EVM's `step` listener. */
  readonly onStep = (step: InterpreterStep): void => {
    const op = step.opcode.code;
    const stack = step.stack;
    const n = stack.length;
    if ((op === SLOAD || op === SSTORE) && n >= 1) {
      this.#addSlot(toHex(step.address.bytes), slotHex(stack[n - 1]!));
    } else if (ADDRESS_AT_TOP.has(op) && n >= 1) {
      const a = addressHex(stack[n - 1]!);
      if (!this.excluded.has(a)) this.#addAddress(a);
    } else if (ADDRESS_SECOND.has(op) && n >= 5) {
      const a = addressHex(stack[n - 2]!);
      if (!this.excluded.has(a)) this.#addAddress(a);
    }
  };

  /** Same accounts with the same slots (order aside). */
  equals(other: AccessListTracer): boolean {
    if (this.#list.size !== other.#list.size) return false;
    for (const [address, slots] of this.#list) {
      const theirs = other.#list.get(address);
      if (!theirs || theirs.size !== slots.size) return false;
      for (const s of slots) if (!theirs.has(s)) return false;
    }
    return true;
  }

  /** Number of addresses plus slots. */
  get size(): number {
    let n = this.#list.size;
    for (const slots of this.#list.values()) n += slots.size;
    return n;
  }

  entries(): AccessListEntry[] {
    return [...this.#list].map(([address, slots]) => ({ address: fromHex(address), storageKeys: [...slots].map((s) => fromHex(s)) }));
  }
}

/** One run of the call with `list` as its access list, `tracer` listening to its steps. */
export interface AccessListRun {
  readonly gasUsed: bigint;
  /** The EVM's error when the call failed ('revert' for a revert). */
  readonly error?: string;
}

/**
 * Most entries (addresses plus slots) a list may grow to: each round adds at least one, so this
 * also bounds the rounds; the call's deadline bounds their time.
 */
export const MAX_ACCESS_LIST_ENTRIES = 100_000;

/** geth's loop: run with the list so far until a run touches nothing new. */
export async function findAccessList(
  initial: readonly AccessListEntry[],
  excluded: ReadonlySet<string>,
  run: (list: readonly AccessListEntry[], tracer: AccessListTracer) => Promise<AccessListRun>,
): Promise<AccessListResult> {
  let prev = new AccessListTracer(initial, excluded);
  for (;;) {
    const list = prev.entries();
    const tracer = new AccessListTracer(list, excluded);
    const r = await run(list, tracer);
    if (tracer.equals(prev)) return { accessList: list, gasUsed: r.gasUsed, ...(r.error !== undefined && { error: r.error }) };
    if (tracer.size > MAX_ACCESS_LIST_ENTRIES) throw rpcErr(`access list longer than ${MAX_ACCESS_LIST_ENTRIES} entries`);
    prev = tracer;
  }
}
