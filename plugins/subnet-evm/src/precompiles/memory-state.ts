/**
 * An in-memory HookState, for testing a precompile module (a built-in or a third party's) without a
 * chain: no journal, nothing persisted. Slots and values must be 32 bytes, addresses 20.
 */
import type { HookState } from '@cornice/evm';
import { toHex } from '@cornice/sdk';

interface Account {
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  storage: Map<string, Uint8Array>;
}

function checkLength(bytes: Uint8Array, length: number, what: string): void {
  if (bytes.length !== length) throw new RangeError(`${what} must be ${length} bytes, got ${bytes.length}`);
}

export class MemoryHookState implements HookState {
  private readonly accounts = new Map<string, Account>();

  private account(address: Uint8Array): Account {
    checkLength(address, 20, 'address');
    const key = toHex(address);
    let a = this.accounts.get(key);
    if (!a) {
      a = { nonce: 0n, balance: 0n, code: new Uint8Array(0), storage: new Map() };
      this.accounts.set(key, a);
    }
    return a;
  }

  async getAccount(address: Uint8Array): Promise<{ nonce: bigint; balance: bigint } | undefined> {
    const a = this.accounts.get(toHex(address));
    return a && { nonce: a.nonce, balance: a.balance };
  }

  async putAccount(address: Uint8Array, account: { nonce: bigint; balance: bigint }): Promise<void> {
    const a = this.account(address);
    a.nonce = account.nonce;
    a.balance = account.balance;
  }

  async addBalance(address: Uint8Array, amount: bigint): Promise<void> {
    this.account(address).balance += amount;
  }

  async getCode(address: Uint8Array): Promise<Uint8Array> {
    return this.accounts.get(toHex(address))?.code ?? new Uint8Array(0);
  }

  async putCode(address: Uint8Array, code: Uint8Array): Promise<void> {
    this.account(address).code = code;
  }

  async getStorage(address: Uint8Array, slot: Uint8Array): Promise<Uint8Array> {
    checkLength(slot, 32, 'slot');
    return this.accounts.get(toHex(address))?.storage.get(toHex(slot)) ?? new Uint8Array(32);
  }

  async putStorage(address: Uint8Array, slot: Uint8Array, value: Uint8Array): Promise<void> {
    checkLength(slot, 32, 'slot');
    checkLength(value, 32, 'value');
    const storage = this.account(address).storage;
    if (value.every((b) => b === 0)) storage.delete(toHex(slot));
    else storage.set(toHex(slot), value.slice());
  }

  async deleteAccount(address: Uint8Array): Promise<void> {
    this.accounts.delete(toHex(address));
  }

  /** The non-zero slots of an account: hex slot -> hex value (no 0x). */
  storageOf(address: Uint8Array): Record<string, string> {
    const storage = this.accounts.get(toHex(address))?.storage ?? new Map<string, Uint8Array>();
    return Object.fromEntries([...storage].map(([k, v]) => [k, toHex(v)]));
  }

  balanceOf(address: Uint8Array): bigint {
    return this.accounts.get(toHex(address))?.balance ?? 0n;
  }
}
