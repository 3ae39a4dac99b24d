/**
 * Accounts in the state manager's cache without @ethereumjs' per-access encoding work. Its account
 * cache holds each account as RLP: every putAccount encodes it (generic RLP with hex round trips for
 * the bigints) and every getAccount decodes it again — runTx does 4-6 of each per transfer, a
 * visible share of a node's CPU under pipelined transfers (bench/evm.mjs). Here an account is encoded by a direct writer (the same
 * bytes as Account.serialize()) and the decoded Account is remembered beside its encoding, so a get
 * of an unchanged entry copies it instead of decoding.
 *
 * A flush writes the changed accounts into the trie as one update (trie-batch.ts), not one put each.
 */
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { RLP } from '@ethereumjs/rlp';
import { Account, type Address, createAccountFromRLP, unpadBytes, unprefixedHexToBytes } from '@ethereumjs/util';
import { toHex } from '@cornice/sdk';
import { putMany } from './trie-batch.js';

/** Most accounts takeFlushed reports (a block changes a few thousand at most). */
const MAX_FLUSHED = 100_000;

/** Most absent accounts remembered at one root (see #absent). */
const MAX_ABSENT = 1_000;

/** Decoded accounts by the encoding the cache holds (the encodings are never changed in place). */
const decoded = new WeakMap<Uint8Array, Account>();

function copyOf(a: Account): Account {
  return new Account(a.nonce, a.balance, a.storageRoot, a.codeHash);
}

/** A lowercase hex digit's value (bigint.toString(16) gives lowercase). */
function nibble(c: number): number {
  return c <= 57 ? c - 48 : c - 87;
}

/** The minimal big-endian bytes of a non-negative bigint, as an RLP string item into `out` at `at`; the next offset. */
function writeQuantity(out: Uint8Array, at: number, n: bigint): number {
  if (n === 0n) {
    out[at] = 0x80;
    return at + 1;
  }
  if (n < 0x80n) {
    out[at] = Number(n);
    return at + 1;
  }
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  const len = hex.length / 2;
  out[at] = 0x80 + len;
  for (let i = 0; i < len; i++) out[at + 1 + i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return at + 1 + len;
}

/**
 * Where encodeAccount writes before copying out exactly the encoding: one new array per account,
 * not two (an array of over 64 bytes is costly to make: the sdk's pooledBytes says why).
 */
const scratch = new Uint8Array(2 + 9 + 33 + 33 + 33);

/** Account.serialize()'s bytes: RLP [nonce, balance, storageRoot, codeHash] (the payload is always 56+ bytes). */
export function encodeAccount(a: Account): Uint8Array {
  if (a.storageRoot.length !== 32 || a.codeHash.length !== 32 || a.nonce >= 1n << 64n || a.balance >= 1n << 256n) return a.serialize();
  const buf = scratch;
  let at = writeQuantity(buf, 2, a.nonce);
  at = writeQuantity(buf, at, a.balance);
  buf[at++] = 0xa0;
  buf.set(a.storageRoot, at);
  at += 32;
  buf[at++] = 0xa0;
  buf.set(a.codeHash, at);
  at += 32;
  buf[0] = 0xf8;
  buf[1] = at - 2;
  return buf.slice(0, at);
}

/** The account an encoding in the cache stands for (a new object each time: callers change it). */
export function accountOf(rlp: Uint8Array): Account {
  const known = decoded.get(rlp);
  if (known) return copyOf(known);
  const account = createAccountFromRLP(rlp);
  decoded.set(rlp, copyOf(account));
  return account;
}

/** What the account cache needs of an account to put it: its encoding (already made). */
export function encoded(rlp: Uint8Array): Account {
  return { serialize: () => rlp } as unknown as Account;
}

/** A MerkleStateManager (with caches) whose account gets and puts go through the cache as above. */
export class FastAccountStateManager extends MerkleStateManager {
  override async getAccount(address: Address): Promise<Account | undefined> {
    const elem = this._caches?.account?.get(address);
    if (elem === undefined) return super.getAccount(address);
    return elem.accountRLP === undefined ? undefined : accountOf(elem.accountRLP);
  }

  override async putAccount(address: Address, account: Account | undefined): Promise<void> {
    const cache = this._caches?.account;
    if (account === undefined || cache === undefined) return super.putAccount(address, account);
    const rlp = encodeAccount(account);
    decoded.set(rlp, copyOf(account));
    cache.put(address, encoded(rlp));
  }

  /**
   * A slot write goes to the storage cache only, as for accounts; the flush writes it to the
   * account's storage trie. The stock putStorage writes the cache and then the trie too (it tests
   * what the cache's put returns, which is nothing), so every SSTORE re-hashed the storage trie's
   * path: most of a storage loop's cost (bench/trace.mjs's 1M-gas loop, whose iterations each
   * SSTORE). The account's storage root, which the stock put refreshed on each write, is refreshed
   * at the flush, as geth refreshes it between txs. Test: accounts.test.ts "a slot write waits for the flush".
   */
  override async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    const cache = this._caches?.storage;
    if (cache === undefined || key.length !== 32 || value.length > 32) return super.putStorage(address, key, value);
    if ((await this.getAccount(address)) === undefined) return super.putStorage(address, key, value);
    cache.put(address, key, RLP.encode(unpadBytes(value)));
  }

  /**
   * The stock flush (code, then storage, then accounts), with the accounts' puts made as one trie
   * update. Otherwise (an account that exists is deleted, or a trie putMany does not handle) they
   * go one by one, in the stock order.
   */
  override async flush(): Promise<void> {
    const cache = this._caches?.account;
    if (cache === undefined) return super.flush();
    let items: ReturnType<typeof cache.flush> = [];
    // The stock flush takes the accounts last (code and storage change accounts): it gets none here.
    cache.flush = () => ((items = Object.getPrototypeOf(cache).flush.call(cache)), []);
    try {
      await super.flush();
    } finally {
      delete (cache as { flush?: unknown }).flush;
    }
    this.#note(items);
    if (await this.#putAll(items)) return;
    for (const [address, elem] of items) {
      if (elem.accountRLP === undefined) await this._trie.del(unprefixedHexToBytes(address));
      else await this._trie.put(unprefixedHexToBytes(address), elem.accountRLP);
    }
  }

  /** Accounts flushed since the last takeFlushed (unprefixed hex address -> RLP, null: none); undefined once too many to keep. */
  #flushed: Map<string, Uint8Array | null> | undefined = new Map();

  #note(items: Array<[string, { accountRLP: Uint8Array | undefined }]>): void {
    if (!this.#flushed) return;
    for (const [address, elem] of items) this.#flushed.set(address, elem.accountRLP ?? null);
    if (this.#flushed.size > MAX_FLUSHED) this.#flushed = undefined;
  }

  /**
   * Every account written to the trie since the last call (or since this state manager was made),
   * with what it holds now; undefined when more were written than are kept. A state at the root
   * before those writes differs from the state now only in these accounts.
   */
  takeFlushed(): ReadonlyMap<string, Uint8Array | null> | undefined {
    const flushed = this.#flushed;
    this.#flushed = new Map();
    return flushed;
  }

  /**
   * The puts as one update when every deletion among `items` is of an account the trie does not
   * hold (a no-op: runTx deletes the coinbase it touched when it stays empty, in every block), so
   * that the order does not matter. False, with nothing done, otherwise.
   */
  async #putAll(items: Array<[string, { accountRLP: Uint8Array | undefined }]>): Promise<boolean> {
    const puts: Array<readonly [Uint8Array, Uint8Array]> = [];
    const start = toHex(this._trie.root());
    for (const [address, elem] of items) {
      const key = unprefixedHexToBytes(address);
      if (elem.accountRLP !== undefined) puts.push([key, elem.accountRLP]);
      else if (!(await this.#lacks(start, address, key))) return false;
    }
    if (!(await putMany(this._trie, puts))) return false;
    // Puts add keys and remove none: what was absent stays absent at the new root unless put now.
    const absent = this.#absent;
    if (absent?.root === start) {
      for (const [address, elem] of items) if (elem.accountRLP !== undefined) absent.keys.delete(address);
      this.#absent = { root: toHex(this._trie.root()), keys: absent.keys };
    }
    return true;
  }

  /**
   * Accounts (unprefixed hex) the trie was found not to hold, and the root it had then: a root
   * fixes the trie's content, so the answer holds for as long as the trie is at that root. A
   * transfer's coinbase is such a deletion in every block, and looking it up walked its path from
   * the root. Test: accounts.test.ts "an account found absent is not looked up again".
   */
  #absent: { root: string; keys: Set<string> } | undefined;

  /** True when the trie, at `root` (its hex), does not hold `address` (its `key`). */
  async #lacks(root: string, address: string, key: Uint8Array): Promise<boolean> {
    if (this.#absent?.root === root && this.#absent.keys.has(address)) return true;
    if ((await this._trie.get(key)) !== null) return false;
    if (this.#absent?.root !== root) this.#absent = { root, keys: new Set() };
    // A bound: a block deletes a few absent accounts at most.
    if (this.#absent.keys.size < MAX_ABSENT) this.#absent.keys.add(address);
    return true;
  }
}
