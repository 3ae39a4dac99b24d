/**
 * geth's prestateTracer: the accounts a transaction touched as they were before it, or with
 * `diffMode` what it changed.
 *
 * Touched: the sender, the recipient (for a creation, the created address), the block's coinbase,
 * an address named by BALANCE, EXTCODESIZE, EXTCODECOPY, EXTCODEHASH, SELFDESTRUCT or a CALL of any
 * kind (precompiles too), the address a CREATE or CREATE2 makes, and each slot SLOAD or SSTORE
 * names (in the frame's storage). Each is read when first touched, from the state at that moment
 * (the sender, recipient and coinbase before the tx pays for gas), as geth reads them.
 *
 * - Default mode: `{address: {balance, code?, nonce?, storage?}}`. The balance is always there
 *   (`0x0` too); a zero nonce, empty code and no slots are left out; a slot read as zero is kept.
 *   A created address that was empty before is left out.
 * - `diffMode`: `{post, pre}`. An account nothing changed is in neither. `post` holds only the
 *   fields that changed (a slot set to zero is left out); `pre` holds the account as before, with
 *   only the slots that changed and were not zero. An account created empty is not in `pre`; one the
 *   tx created and destroyed again (EIP-6780) is not in `post`.
 * - `disableCode` / `disableStorage`: no code / no slots, in both modes (the code still decides
 *   whether an account was empty).
 * Keys are sorted as geth sorts them (addresses and slots as lower-case hex). Each account and slot
 * kept counts towards the trace's output bound (`grow`): a trace touching thousands of large
 * contracts is refused before it is built.
 * Tests: tracers.test.ts "prestateTracer".
 */
import type { InterpreterStep } from '@ethereumjs/evm';
import { Address, createContractAddress } from '@ethereumjs/util';
import { keccak256 } from '../crypto.js';
import { boolConfig } from './config-fields.js';
import { OpWatch, type OpEffect } from './op-watch.js';
import type { EvmTracer, TraceContext, TracerFactory } from './tracer.js';

const SLOAD = 0x54;
const SSTORE = 0x55;
const SELFDESTRUCT = 0xff;
const CREATE = 0xf0;
const CREATE2 = 0xf5;
/** BALANCE, EXTCODESIZE, EXTCODECOPY, EXTCODEHASH, SELFDESTRUCT: the address is the top of the stack. */
const ADDRESS_AT_TOP = new Set([0x31, 0x3b, 0x3c, 0x3f, SELFDESTRUCT]);
/** CALL, CALLCODE, DELEGATECALL, STATICCALL: the address is the second item. */
const ADDRESS_SECOND = new Set([0xf1, 0xf2, 0xf4, 0xfa]);
const ADDRESS_MASK = (1n << 160n) - 1n;
/** Most zero bytes a CREATE2's init code is padded with past memory (geth's bound; past it, no lookup). */
const MAX_PADDING = 1024 * 1024;
/** Bytes one slot adds to the output (two quoted 32-byte hex words). */
const SLOT_BYTES = 140;
/** Bytes an account adds besides its code and slots. */
const ACCOUNT_BYTES = 120;

interface Account {
  balance: bigint;
  nonce: bigint;
  /** Undefined with disableCode. */
  code: Uint8Array | undefined;
  /** Slot (hex) -> value (hex); undefined with disableStorage. */
  storage: Map<string, string> | undefined;
  /** No balance, nonce or code before the tx (the code read even with disableCode). */
  empty: boolean;
}

interface PostAccount {
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  storage: Map<string, string>;
}

export interface PrestateConfig {
  readonly diffMode: boolean;
  readonly disableCode: boolean;
  readonly disableStorage: boolean;
}

export const prestateTracer: TracerFactory = (config) =>
  new PrestateTracer(boolConfig(config, 'prestateTracerConfig', ['diffMode', 'disableCode', 'disableStorage']));

function hex(b: Uint8Array): string {
  return `0x${Buffer.from(b).toString('hex')}`;
}

function word(n: bigint): string {
  return `0x${n.toString(16).padStart(64, '0')}`;
}

function wordBytes(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}

function addressOf(n: bigint): Address {
  return new Address(Uint8Array.from(Buffer.from((n & ADDRESS_MASK).toString(16).padStart(40, '0'), 'hex')));
}

function quantity(n: bigint): string {
  return `0x${n.toString(16)}`;
}

/** The bytes of memory at [offset, offset + size), zero-padded past its end; undefined past geth's padding bound. */
function memoryCopy(memory: Uint8Array, offset: bigint, size: bigint): Uint8Array | undefined {
  if (size === 0n) return new Uint8Array();
  if (offset + size > BigInt(memory.length + MAX_PADDING)) return undefined;
  const out = new Uint8Array(Number(size));
  const start = Number(offset);
  if (start < memory.length) out.set(memory.subarray(start, Math.min(start + out.length, memory.length)));
  return out;
}

function sortedObject<V>(entries: Iterable<[string, V]>, value: (v: V) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = value(v);
  return out;
}

export class PrestateTracer implements EvmTracer {
  readonly #pre = new Map<string, Account>();
  readonly #post = new Map<string, PostAccount>();
  readonly #created = new Set<string>();
  readonly #deleted = new Set<string>();
  #ctx: TraceContext | undefined;
  #watch: OpWatch | undefined;

  constructor(private readonly config: PrestateConfig) {}

  async start(ctx: TraceContext): Promise<void> {
    this.#ctx = ctx;
    const from = ctx.tx.getSenderAddress();
    let to = ctx.tx.to;
    if (to === undefined) {
      const sender = await ctx.vm.stateManager.getAccount(from);
      to = createContractAddress(from, sender?.nonce ?? 0n);
      this.#created.add(to.toString());
    }
    for (const a of [from, to, ctx.block.header.coinbase]) this.#keep(a.toString(), await this.#readAccount(a));
    this.#watch = new OpWatch(ctx.vm, { step: (s) => this.#step(s) });
  }

  async finish(): Promise<unknown> {
    this.#watch?.close();
    if (this.config.diffMode) await this.#diff();
    for (const a of this.#created) if (this.#pre.get(a)?.empty) this.#pre.delete(a);
    const pre = sortedObject(this.#pre, (a) => this.#preJson(a));
    if (!this.config.diffMode) return pre;
    return { post: sortedObject(this.#post, (a) => postJson(a)), pre };
  }

  #preJson(a: Account): Record<string, unknown> {
    const out: Record<string, unknown> = { balance: quantity(a.balance) };
    if (a.code && a.code.length > 0) out.code = hex(a.code);
    if (a.nonce !== 0n) out.nonce = Number(a.nonce);
    if (a.storage && a.storage.size > 0) out.storage = sortedObject(a.storage, (v) => v);
    return out;
  }

  async #readAccount(address: Address): Promise<Account> {
    const sm = this.#ctx!.vm.stateManager;
    const account = await sm.getAccount(address);
    const code = account ? await sm.getCode(address) : new Uint8Array();
    const balance = account?.balance ?? 0n;
    const nonce = account?.nonce ?? 0n;
    return {
      balance,
      nonce,
      code: this.config.disableCode ? undefined : code,
      storage: this.config.disableStorage ? undefined : new Map(),
      empty: balance === 0n && nonce === 0n && code.length === 0,
    };
  }

  async #readSlot(address: Address, slot: bigint): Promise<string> {
    const value = await this.#ctx!.vm.stateManager.getStorage(address, wordBytes(slot));
    return `0x${Buffer.from(value).toString('hex').padStart(64, '0')}`;
  }

  /** Keeps an account read at its first touch (a later read of one already kept is dropped). */
  #keep(address: string, account: Account): void {
    if (this.#pre.has(address)) return;
    this.#ctx!.grow(ACCOUNT_BYTES + 2 * (account.code?.length ?? 0));
    this.#pre.set(address, account);
  }

  async #touchAccount(address: Address, then?: () => void): Promise<OpEffect | undefined> {
    const key = address.toString();
    const account = this.#pre.has(key) ? undefined : await this.#readAccount(address);
    return () => {
      if (account) this.#keep(key, account);
      then?.();
    };
  }

  async #touchSlot(address: Address, slot: bigint): Promise<OpEffect | undefined> {
    if (this.config.disableStorage) return undefined;
    const key = address.toString();
    const slotKey = word(slot);
    if (this.#pre.get(key)?.storage?.has(slotKey)) return undefined;
    // The frame's account is kept before its code runs (the call or create that made the frame);
    // read here too for a frame no opcode made (a precompile's own calls).
    const account = this.#pre.has(key) ? undefined : await this.#readAccount(address);
    const value = await this.#readSlot(address, slot);
    return () => {
      if (account) this.#keep(key, account);
      const storage = this.#pre.get(key)!.storage!;
      if (storage.has(slotKey)) return;
      this.#ctx!.grow(SLOT_BYTES);
      storage.set(slotKey, value);
    };
  }

  #step(s: InterpreterStep): Promise<OpEffect | undefined> | undefined {
    const op = s.opcode.code;
    const stack = s.stack;
    const n = stack.length;
    if ((op === SLOAD || op === SSTORE) && n >= 1) return this.#touchSlot(s.address, stack[n - 1]!);
    if (ADDRESS_AT_TOP.has(op) && n >= 1) {
      const self = s.address.toString();
      // EIP-6780: only an account created by this tx is deleted by its SELFDESTRUCT.
      const deletes = op === SELFDESTRUCT && this.#created.has(self);
      return this.#touchAccount(addressOf(stack[n - 1]!), deletes ? () => this.#deleted.add(self) : undefined);
    }
    if (ADDRESS_SECOND.has(op) && n >= 5) return this.#touchAccount(addressOf(stack[n - 2]!));
    if (op === CREATE) return this.#touchCreated(s.address, undefined);
    if (op === CREATE2 && n >= 4) {
      const init = memoryCopy(s.memory, stack[n - 2]!, stack[n - 3]!);
      if (init === undefined) return undefined;
      return this.#touchCreated(s.address, { salt: wordBytes(stack[n - 4]!), init });
    }
    return undefined;
  }

  async #touchCreated(creator: Address, create2: { salt: Uint8Array; init: Uint8Array } | undefined): Promise<OpEffect | undefined> {
    let address: Address;
    if (create2) {
      address = new Address(keccak256(Uint8Array.from([0xff, ...creator.bytes, ...create2.salt, ...keccak256(create2.init)])).subarray(12));
    } else {
      const account = await this.#ctx!.vm.stateManager.getAccount(creator);
      address = createContractAddress(creator, account?.nonce ?? 0n);
    }
    return this.#touchAccount(address, () => this.#created.add(address.toString()));
  }

  /** geth's diff: `post` gets what changed, `pre` loses the accounts and slots that did not. */
  async #diff(): Promise<void> {
    const sm = this.#ctx!.vm.stateManager;
    for (const [key, pre] of this.#pre) {
      if (this.#deleted.has(key)) continue;
      const address = new Address(Uint8Array.from(Buffer.from(key.slice(2), 'hex')));
      const now = await sm.getAccount(address);
      const post: PostAccount = { storage: new Map() };
      let modified = false;
      if ((now?.balance ?? 0n) !== pre.balance) {
        modified = true;
        post.balance = now?.balance ?? 0n;
      }
      if ((now?.nonce ?? 0n) !== pre.nonce) {
        modified = true;
        post.nonce = now?.nonce ?? 0n;
      }
      if (!this.config.disableCode) {
        const code = now ? await sm.getCode(address) : new Uint8Array();
        if (Buffer.compare(code, pre.code!) !== 0) {
          modified = true;
          post.code = code;
        }
      }
      if (pre.storage) {
        for (const [slot, before] of pre.storage) {
          const after = await this.#readSlot(address, BigInt(slot));
          if (before === after || BigInt(before) === 0n) pre.storage.delete(slot);
          if (before !== after) {
            modified = true;
            if (BigInt(after) !== 0n) post.storage.set(slot, after);
          }
        }
      }
      if (modified) this.#post.set(key, post);
      else this.#pre.delete(key);
    }
  }
}

function postJson(a: PostAccount): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (a.balance !== undefined) out.balance = quantity(a.balance);
  if (a.code && a.code.length > 0) out.code = hex(a.code);
  if (a.nonce) out.nonce = Number(a.nonce);
  if (a.storage.size > 0) out.storage = sortedObject(a.storage, (v) => v);
  return out;
}
