/**
 * Node-held accounts (personal_): each private key is stored encrypted with its password — scrypt
 * (N = 2^15, r = 8, p = 1: 32 MiB, ~0.1 s) derives an AES-256-GCM key from the password and a
 * random salt; a random nonce per record; the address is authenticated data, so a record cannot be
 * moved to another address. A wrong password fails GCM's authentication (a constant-time check).
 * Keys and passwords are never logged. Unlocked keys stay in memory until their deadline on the
 * injected clock, then are wiped. Key derivations run one at a time with a bounded queue, so a
 * flood of personal_ calls cannot occupy the libuv thread pool the store also runs on.
 *
 * Store layout: key 0x61 ‖ u64 BE sequence (creation order); value = address(20) ‖ version(1) ‖
 * log2 N(1) ‖ r(1) ‖ p(1) ‖ salt(16) ‖ nonce(12) ‖ tag(16) ‖ ciphertext(32).
 */
import { createCipheriv, createDecipheriv, getRandomValues, scrypt, type ScryptOptions } from 'node:crypto';
import { concatBytes, serializer, toHex, utf8Encode, type Clock, type KeyValueStore } from '@cornice/sdk';
import { EvmRpcError, type Address } from '../backend.js';
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
}

export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = { defaultSeconds: 300, maxSeconds: 24 * 3600, maxWaiting: 32 };

type Derive = (password: string, salt: Uint8Array, log2N: number, r: number, p: number) => Promise<Uint8Array>;

const wrongPassword = (): EvmRpcError => new EvmRpcError(-32000, 'could not decrypt key with given password');
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

export class AccountStore {
  #loaded: Promise<Map<string, Entry>> | undefined;
  #nextSeq = 0;
  readonly #unlocked = new Map<string, { key: Uint8Array; until: number }>();
  readonly #oneAtATime = serializer();
  #waiting = 0;

  constructor(
    private readonly store: KeyValueStore,
    private readonly clock: Clock,
    private readonly limits: AccountLimits,
  ) {}

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

  /** The private key of `address`, decrypted with `password` (the caller wipes it after use). */
  async decrypt(address: Address, password: string): Promise<Uint8Array> {
    const entry = (await this.#entries()).get(toHex(address));
    if (!entry) throw unknownAccount();
    return decrypt(entry.record, password, this.#derive);
  }

  /** Keeps the key of `address` in memory for `seconds` (default 300, bounded). */
  async unlock(address: Address, password: string, seconds: number | undefined): Promise<void> {
    const s = seconds ?? this.limits.defaultSeconds;
    if (!(s >= 1 && s <= this.limits.maxSeconds)) {
      throw new EvmRpcError(-32602, `invalid argument 2: unlock duration must be between 1 and ${this.limits.maxSeconds} seconds`);
    }
    const key = await this.decrypt(address, password);
    this.lock(address);
    this.#unlocked.set(toHex(address), { key, until: this.clock.now() + s * 1000 });
  }

  /** Forgets the unlocked key of `address`; false when it was not unlocked. */
  lock(address: Address): boolean {
    const id = toHex(address);
    const u = this.#unlocked.get(id);
    if (!u) return false;
    u.key.fill(0);
    this.#unlocked.delete(id);
    return true;
  }

  /** A copy of the key of an unlocked account (the caller wipes it), or undefined (locked, or expired). */
  unlockedKey(address: Address): Uint8Array | undefined {
    this.#expire();
    return this.#unlocked.get(toHex(address))?.key.slice();
  }

  /** Wipes every unlocked key (shutdown). */
  close(): void {
    for (const u of this.#unlocked.values()) u.key.fill(0);
    this.#unlocked.clear();
  }

  #expire(): void {
    const now = this.clock.now();
    for (const [id, u] of this.#unlocked) {
      if (u.until <= now) {
        u.key.fill(0);
        this.#unlocked.delete(id);
      }
    }
  }
}
