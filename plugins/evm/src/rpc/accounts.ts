/**
 * Node-held accounts (personal_): each private key is stored encrypted with its password — scrypt
 * (N = 2^15, r = 8, p = 1: 32 MiB) derives an AES-256-GCM key from the password and a
 * random salt; a random nonce per record; the address is authenticated data, so a record cannot be
 * moved to another address. A wrong password fails GCM's authentication (a constant-time check).
 * Keys and passwords are never logged. Unlocked keys stay in memory until their deadline on the
 * injected clock, then are wiped. Key derivations run one at a time with a bounded queue, so a
 * flood of personal_ calls cannot occupy the libuv thread pool the store also runs on.
 *
 * An unlock belongs to a scope (`UnlockScope`): the store's shared one (an unlock over HTTP, where
 * there is no caller to tie it to: every caller may use it, hence personal.ts's insecure-unlock
 * gate) or a WebSocket connection's own, which only that connection uses and which is wiped when it
 * closes. Tests: rpc-personal.test.ts ("an unlock over a WebSocket is that connection's").
 *
 * Password checks of one account are throttled: after `freeFailures` wrong passwords in a row, each
 * further check waits for a window that doubles from `backoffMs` up to `backoffMaxMs` (one guess per
 * window, concurrent ones included: the window is taken before the derivation), answered -32005
 * without a derivation. The right password after the window succeeds and clears the count; a quiet
 * account forgets its count after another `backoffMaxMs`. So a guesser gets about one guess a
 * minute and the owner waits at most `backoffMaxMs` once the guessing stops — never locked out for
 * good (the failure the issue named: ~3 guesses/s, no bound). Test: rpc-personal.test.ts
 * ("failed password checks are throttled per account").
 *
 * Store layout: key 0x61 ‖ u64 BE sequence (creation order); value = address(20) ‖ version(1) ‖
 * log2 N(1) ‖ r(1) ‖ p(1) ‖ salt(16) ‖ nonce(12) ‖ tag(16) ‖ ciphertext(32).
 */
import { createCipheriv, createDecipheriv, getRandomValues, scrypt, type ScryptOptions } from 'node:crypto';
import { concatBytes, serializer, toHex, utf8Encode, type Clock, type KeyValueStore } from '@cornice/sdk';
import { EvmRpcError, type Address } from '../evm-backend.js';
import { addressOf, isValidPrivateKey, randomPrivateKey } from './keys.js';

const PREFIX = 0x61;
const VERSION = 1;
const LOG2_N = 15;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const SALT = 16;
const NONCE = 12;
const TAG = 16;
const KEY = 32;
const RECORD = 20 + 4 + SALT + NONCE + TAG + KEY;

export interface AccountLimits {
  /** Unlock duration when none is given (geth: 300 s). */
  readonly defaultSeconds: number;
  /** Longest unlock allowed. */
  readonly maxSeconds: number;
  /** Key derivations (one per personal_ call that takes a password) waiting their turn. */
  readonly maxWaiting: number;
  /** Wrong passwords in a row an account takes before its checks are throttled (default 3). */
  readonly freeFailures?: number;
  /** The first throttle window, ms (default 1,000); each further failure doubles it. */
  readonly backoffMs?: number;
  /** The longest throttle window, ms (default 60,000). */
  readonly backoffMaxMs?: number;
}

export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = { defaultSeconds: 300, maxSeconds: 24 * 3600, maxWaiting: 32, freeFailures: 3, backoffMs: 1_000, backoffMaxMs: 60_000 };

type Derive = (password: string, salt: Uint8Array, log2N: number, r: number, p: number) => Promise<Uint8Array>;

const WRONG_PASSWORD = 'could not decrypt key with given password';
const wrongPassword = (): EvmRpcError => new EvmRpcError(-32000, WRONG_PASSWORD);
const unknownAccount = (): EvmRpcError => new EvmRpcError(-32000, 'no key for given address or file');

function deriveKey(password: string, salt: Uint8Array, log2N: number, r: number, p: number): Promise<Uint8Array> {
  const N = 2 ** log2N;
  const opts: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(utf8Encode(password), salt, 32, opts, (err, key) => {
      if (err) reject(new EvmRpcError(-32000, 'key derivation failed'));
      else resolve(new Uint8Array(key.buffer, key.byteOffset, key.byteLength));
    });
  });
}

async function encrypt(address: Address, privateKey: Uint8Array, password: string, derive: Derive): Promise<Uint8Array> {
  const salt = getRandomValues(new Uint8Array(SALT));
  const nonce = getRandomValues(new Uint8Array(NONCE));
  const aesKey = await derive(password, salt, LOG2_N, SCRYPT_R, SCRYPT_P);
  const cipher = createCipheriv('aes-256-gcm', aesKey, nonce);
  cipher.setAAD(address);
  const ct = concatBytes(cipher.update(privateKey), cipher.final());
  const tag = cipher.getAuthTag();
  aesKey.fill(0);
  return concatBytes(address, Uint8Array.of(VERSION, LOG2_N, SCRYPT_R, SCRYPT_P), salt, nonce, tag, ct);
}

async function decrypt(record: Uint8Array, password: string, derive: Derive): Promise<Uint8Array> {
  const address = record.subarray(0, 20);
  const [version, log2N, r, p] = record.subarray(20, 24);
  if (version !== VERSION || record.length !== RECORD) throw new EvmRpcError(-32000, 'unsupported account record');
  let at = 24;
  const salt = record.subarray(at, (at += SALT));
  const nonce = record.subarray(at, (at += NONCE));
  const tag = record.subarray(at, (at += TAG));
  const ct = record.subarray(at, (at += KEY));
  const aesKey = await derive(password, salt, log2N!, r!, p!);
  const decipher = createDecipheriv('aes-256-gcm', aesKey, nonce);
  decipher.setAAD(address);
  decipher.setAuthTag(tag);
  try {
    return concatBytes(decipher.update(ct), decipher.final());
  } catch {
    throw wrongPassword();
  } finally {
    aesKey.fill(0);
  }
}

function seqKey(seq: number): Uint8Array {
  const k = new Uint8Array(9);
  k[0] = PREFIX;
  new DataView(k.buffer).setBigUint64(1, BigInt(seq));
  return k;
}

interface Entry {
  readonly address: Address;
  readonly record: Uint8Array;
}

/** Unlocked keys of one holder (the shared scope, or a WebSocket connection), until their deadline. */
export class UnlockScope {
  readonly #keys = new Map<string, { key: Uint8Array; until: number }>();

  constructor(private readonly clock: Clock) {}

  set(address: Address, key: Uint8Array, seconds: number): void {
    this.lock(address);
    this.#keys.set(toHex(address), { key, until: this.clock.now() + seconds * 1000 });
  }

  /** Forgets the unlocked key of `address`; false when it was not unlocked here. */
  lock(address: Address): boolean {
    const id = toHex(address);
    const u = this.#keys.get(id);
    if (!u) return false;
    u.key.fill(0);
    this.#keys.delete(id);
    return true;
  }

  /** A copy of the key (the caller wipes it), or undefined (locked, or expired). */
  key(address: Address): Uint8Array | undefined {
    const now = this.clock.now();
    for (const [id, u] of this.#keys) {
      if (u.until <= now) {
        u.key.fill(0);
        this.#keys.delete(id);
      }
    }
    return this.#keys.get(toHex(address))?.key.slice();
  }

  /** Wipes every key. */
  close(): void {
    for (const u of this.#keys.values()) u.key.fill(0);
    this.#keys.clear();
  }
}

/** Password checks of one account: wrong ones in a row, checks running, and the end of its window. */
interface Throttle {
  failures: number;
  running: number;
  until: number;
  /** When the last wrong password was found. */
  last: number;
}

export class AccountStore {
  #loaded: Promise<Map<string, Entry>> | undefined;
  #nextSeq = 0;
  /** Unlocks every caller may use (made over HTTP). */
  readonly shared: UnlockScope;
  /** Every scope, the connections' too (wiped at close). */
  readonly #scopes = new Set<UnlockScope>();
  readonly #throttles = new Map<string, Throttle>();
  readonly #oneAtATime = serializer();
  #waiting = 0;

  constructor(
    private readonly store: KeyValueStore,
    private readonly clock: Clock,
    private readonly limits: AccountLimits,
  ) {
    this.shared = this.scope();
  }

  /** A new unlock scope (a WebSocket connection's); its holder closes it. */
  scope(): UnlockScope {
    const s = new UnlockScope(this.clock);
    this.#scopes.add(s);
    const close = s.close.bind(s);
    s.close = () => {
      close();
      if (s !== this.shared) this.#scopes.delete(s);
    };
    return s;
  }

  readonly #derive: Derive = async (password, salt, log2N, r, p) => {
    if (this.#waiting >= this.limits.maxWaiting) throw new EvmRpcError(-32005, 'too many account operations waiting: try again later');
    this.#waiting++;
    try {
      return await this.#oneAtATime(() => deriveKey(password, salt, log2N, r, p));
    } finally {
      this.#waiting--;
    }
  };

  #entries(): Promise<Map<string, Entry>> {
    this.#loaded ??= (async () => {
      const out = new Map<string, Entry>();
      for await (const [key, value] of this.store.iterate({ prefix: Uint8Array.of(PREFIX) })) {
        if (key.length !== 9 || value.length !== RECORD) continue;
        const address = value.slice(0, 20);
        out.set(toHex(address), { address, record: value });
        this.#nextSeq = Number(new DataView(key.buffer, key.byteOffset).getBigUint64(1)) + 1;
      }
      return out;
    })();
    // A failed load (store error) is retried by the next call rather than remembered.
    this.#loaded.catch(() => (this.#loaded = undefined));
    return this.#loaded;
  }

  /** Addresses in creation order. */
  async list(): Promise<Address[]> {
    return [...(await this.#entries()).values()].map((e) => e.address);
  }

  async has(address: Address): Promise<boolean> {
    return (await this.#entries()).has(toHex(address));
  }

  /** A new random key stored under `password`; its address. */
  create(password: string): Promise<Address> {
    return this.#add(randomPrivateKey(), password);
  }

  /** Stores `privateKey` under `password`; its address. */
  async import(privateKey: Uint8Array, password: string): Promise<Address> {
    if (!isValidPrivateKey(privateKey)) throw new EvmRpcError(-32000, 'invalid private key');
    return this.#add(privateKey, password);
  }

  async #add(privateKey: Uint8Array, password: string): Promise<Address> {
    const entries = await this.#entries();
    const address = addressOf(privateKey);
    const id = toHex(address);
    if (entries.has(id)) throw new EvmRpcError(-32000, 'account already exists');
    const record = await encrypt(address, privateKey, password, this.#derive);
    // Re-checked after the await: a concurrent import of the same key may have won.
    if (entries.has(id)) throw new EvmRpcError(-32000, 'account already exists');
    entries.set(id, { address, record });
    try {
      await this.store.put(seqKey(this.#nextSeq++), record);
    } catch (e) {
      entries.delete(id);
      throw e;
    }
    return address;
  }

  /** The private key of `address`, decrypted with `password` (the caller wipes it after use); throttled per account (header). */
  async decrypt(address: Address, password: string): Promise<Uint8Array> {
    const id = toHex(address);
    const entry = (await this.#entries()).get(id);
    if (!entry) throw unknownAccount();
    const t = this.#beginCheck(id);
    let verdict: boolean | undefined;
    try {
      const key = await decrypt(entry.record, password, this.#derive);
      verdict = true;
      return key;
    } catch (e) {
      // Only a wrong password counts (not a full derivation queue).
      if (e instanceof EvmRpcError && e.message === WRONG_PASSWORD) verdict = false;
      throw e;
    } finally {
      this.#endCheck(id, t, verdict);
    }
  }

  #window(failures: number): number {
    const free = this.limits.freeFailures ?? 3;
    const base = this.limits.backoffMs ?? 1_000;
    const max = this.limits.backoffMaxMs ?? 60_000;
    const doublings = Math.min(failures - free, 30);
    return Math.min(max, base * 2 ** Math.max(0, doublings));
  }

  /** Admits a password check of account `id`, or -32005 while its window runs. */
  #beginCheck(id: string): Throttle {
    const now = this.clock.now();
    let t = this.#throttles.get(id);
    // A quiet account forgets its failures: the owner is never locked out for good.
    if (t && t.running === 0 && Math.max(t.until, t.last) + (this.limits.backoffMaxMs ?? 60_000) <= now) t = undefined;
    if (!t) {
      t = { failures: 0, running: 0, until: 0, last: 0 };
      this.#throttles.set(id, t);
    }
    const refuse = (ms: number) => new EvmRpcError(-32005, `too many failed password attempts for 0x${id}: try again in ${Math.max(1, Math.ceil(ms / 1000))} s`);
    if (t.until > now) throw refuse(t.until - now);
    if (t.failures + t.running >= (this.limits.freeFailures ?? 3)) {
      // Throttled: this check takes the window now, so checks made meanwhile wait for the next one.
      if (t.running > 0) throw refuse(this.#window(t.failures + 1));
      t.until = now + this.#window(t.failures + 1);
    }
    t.running++;
    return t;
  }

  /** A check ended: `ok` true clears the count, false counts a failure, undefined (not a password verdict) neither. */
  #endCheck(id: string, t: Throttle, ok: boolean | undefined): void {
    t.running--;
    if (ok === true) {
      t.failures = 0;
      t.until = 0;
    } else if (ok === false) {
      t.failures++;
      t.last = this.clock.now();
      if (t.failures >= (this.limits.freeFailures ?? 3)) t.until = Math.max(t.until, this.clock.now() + this.#window(t.failures));
    } else if (t.failures + t.running < (this.limits.freeFailures ?? 3)) t.until = 0;
    if (t.failures === 0 && t.running === 0 && this.#throttles.get(id) === t) this.#throttles.delete(id);
  }

  /** Keeps the key of `address` in memory for `seconds` (default 300, bounded) in `scope` (default: shared). */
  async unlock(address: Address, password: string, seconds: number | undefined, scope: UnlockScope = this.shared): Promise<void> {
    const s = seconds ?? this.limits.defaultSeconds;
    if (!(s >= 1 && s <= this.limits.maxSeconds)) {
      throw new EvmRpcError(-32602, `invalid argument 2: unlock duration must be between 1 and ${this.limits.maxSeconds} seconds`);
    }
    const key = await this.decrypt(address, password);
    scope.set(address, key, s);
  }

  /** Wipes every unlocked key, the connections' too (shutdown). */
  close(): void {
    for (const s of [...this.#scopes]) s.close();
  }
}
