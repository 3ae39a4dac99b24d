/**
 * # Keystore
 *
 * The node's users: named, password-protected areas where chains keep user keys (reference §5,
 * SPEC "Keystore" and "Authentication"). This module is the domain logic only; the JSON-RPC
 * binding is `api/keystore/service.ts`.
 *
 * - **Passwords are never stored or logged.** scrypt (default N=2^15, r=8, p=1: 32 MiB, run off the
 *   event loop) over the password and a random 16-byte per-user salt gives 64 bytes: SHA-256 of the
 *   first 32 is the stored verifier (compared in constant time), the last 32 are the data key,
 *   which is never stored. The KDF parameters live in each user record, so the default can change.
 * - **Data is encrypted at rest**: each value is AES-256-GCM under the data key with a random nonce
 *   and AAD = chainId || key. Keys are not encrypted (as the reference). The username is not in the
 *   AAD, so an export can be imported under another name.
 * - **Layout** (inside the store given, already reserved for the keystore): records at
 *   [0x01] || utf8(username), data at [0x02] || sha256(utf8(username)) || chainId || key
 *   (records.ts). deleteUser and importUser write in one atomic batch.
 * - **Export** (exportUser -> importUser, possibly on another node): the record and every sealed
 *   entry, still encrypted. importUser checks the password against the imported record and
 *   authenticates every entry before writing anything.
 * - **Throttling**: after 5 wrong passwords in a row for a user, attempts are refused without
 *   running the KDF for 1 s, 2 s, 4 s, ... up to 60 s (throttle.ts). importUser is not throttled:
 *   whoever holds an export can guess offline anyway.
 * - **Strength**: SPEC's composition rule, then zxcvbn score >= 2 with the username as a user input,
 *   scored in a worker thread started on first use (password.ts explains why).
 * - **Concurrency**: calls for the same username run one after another, so two concurrent
 *   createUser calls cannot both succeed and deleteUser cannot interleave with an export.
 *
 * Files: keystore.ts (this API), password.ts (limits, strength), crypto.ts (KDF, AEAD),
 * records.ts (layout, codecs), user-store.ts (the encrypted per-chain store), throttle.ts,
 * zxcvbn-worker.ts, errors.ts (KeystoreError, Go-style quoting).
 */
import {
  silentLogger,
  utf8Decode,
  type Id,
  type KeyValueStore,
  type Logger,
} from '@cornice/sdk';
import { DEFAULT_KDF, deriveKeys, kdfParamsProblem, open, randomSalt, verifierMatches, type KdfParams } from './crypto.js';
import { goQuote, KeystoreError } from './errors.js';
import { exceedsChars, hasLoneSurrogate, isStrongPassword, MAX_INPUT_CHARS } from './password.js';
import {
  CHAIN_ID_LENGTH,
  chainDataPrefix,
  decodeExport,
  decodeRecord,
  encodeExport,
  encodeRecord,
  RECORD_PREFIX,
  recordKey,
  USER_DATA_PREFIX_LENGTH,
  userDataPrefix,
  type ExportEntry,
  type UserRecord,
} from './records.js';
import { DEFAULT_THROTTLE, Throttle, type ThrottleOptions } from './throttle.js';
import { UserStore, type UserHandle } from './user-store.js';

export { KeystoreError, type KeystoreErrorCode } from './errors.js';
export { DEFAULT_KDF, type KdfParams } from './crypto.js';
export { DEFAULT_THROTTLE, type ThrottleOptions } from './throttle.js';
export { UserStore } from './user-store.js';

export interface KeystoreOptions {
  /** Already a prefixed sub-store reserved for the keystore. */
  store: KeyValueStore;
  log?: Logger;
  /** Injected clock, ms (throttling). */
  now?: () => number;
  /** scrypt cost for new users; default N=2^15, r=8, p=1 (~32 MiB). */
  kdf?: KdfParams;
  /** Wrong-password throttling; default 5 free attempts, 1000 ms doubling up to 60000 ms. */
  throttle?: ThrottleOptions;
}

const WEAK_PASSWORD =
  'Failed to create user as the given password is too weak. A stronger password is one of 8 or more characters containing attributes of upper and lowercase letters, numbers, and/or special characters';

function incorrectPassword(username: string): KeystoreError {
  return new KeystoreError('IncorrectPassword', `incorrect password for user ${goQuote(username)}`);
}

/** The length and Unicode checks every method runs on its inputs, named after the reference's text. */
function checkInputs(method: string, username: string, password?: string): void {
  if (exceedsChars(username) || (password !== undefined && exceedsChars(password))) {
    throw new KeystoreError(
      'TooLong',
      `${method} call rejected due to username or password exceeding maximum length of ${MAX_INPUT_CHARS} chars`,
    );
  }
}

function checkUnicode(username: string, password?: string): void {
  if (hasLoneSurrogate(username)) throw new KeystoreError('InvalidInput', 'username is not valid Unicode');
  if (password !== undefined && hasLoneSurrogate(password)) {
    throw new KeystoreError('InvalidInput', 'password is not valid Unicode');
  }
}

function checkThrottleOptions(t: ThrottleOptions): void {
  const ok =
    Number.isInteger(t.freeAttempts) &&
    t.freeAttempts >= 1 &&
    Number.isFinite(t.baseDelayMs) &&
    t.baseDelayMs >= 0 &&
    Number.isFinite(t.maxDelayMs) &&
    t.maxDelayMs >= 0;
  if (!ok) throw new KeystoreError('InvalidOptions', 'throttle options out of range');
}

export class Keystore {
  readonly #store: KeyValueStore;
  readonly #log: Logger;
  readonly #kdf: KdfParams;
  readonly #throttle: Throttle;
  /** Tail of each username's queue of operations (removed when it drains). */
  readonly #queues = new Map<string, Promise<void>>();
  /** Revocation handles of the stores opened per user (deleteUser revokes them). */
  readonly #handles = new Map<string, UserHandle>();

  constructor(opts: KeystoreOptions) {
    this.#store = opts.store;
    this.#log = opts.log ?? silentLogger;
    const kdf = opts.kdf ?? DEFAULT_KDF;
    const problem = kdfParamsProblem(kdf);
    if (problem) throw new KeystoreError('InvalidOptions', problem);
    this.#kdf = { N: kdf.N, r: kdf.r, p: kdf.p };
    const throttle = opts.throttle ?? DEFAULT_THROTTLE;
    checkThrottleOptions(throttle);
    this.#throttle = new Throttle({ ...throttle }, opts.now ?? Date.now);
  }

  async createUser(username: string, password: string): Promise<void> {
    checkInputs('CreateUser', username, password);
    if (username === '') throw new KeystoreError('EmptyUsername', "username can't be the empty string");
    checkUnicode(username, password);
    return this.#serial(username, async () => {
      if (await this.#store.has(recordKey(username))) {
        throw new KeystoreError('UserExists', `user already exists: ${username}`);
      }
      if (!(await isStrongPassword(password, username))) throw new KeystoreError('WeakPassword', WEAK_PASSWORD);
      const salt = randomSalt();
      const { verifier, dataKey } = await deriveKeys(password, salt, this.#kdf);
      dataKey.fill(0);
      const record: UserRecord = { kdf: { ...this.#kdf }, salt, verifier };
      const batch = this.#store.batch();
      // Data left under this name by an interrupted or raced writer would not decrypt: drop it.
      for (const key of await this.#dataKeys(username)) batch.delete(key);
      await batch.put(recordKey(username), encodeRecord(record)).write();
      this.#throttle.reset(username);
      this.#log.info('keystore user created', { username });
    });
  }

  /** Usernames in byte order of their UTF-8; [] when none. */
  async listUsers(): Promise<string[]> {
    const users: string[] = [];
    for await (const [key] of this.#store.iterate({ prefix: Uint8Array.of(RECORD_PREFIX) })) {
      users.push(utf8Decode(key.subarray(1)));
    }
    return users;
  }

  async deleteUser(username: string, password: string): Promise<void> {
    checkInputs('DeleteUser', username, password);
    checkUnicode(username, password);
    return this.#serial(username, async () => {
      const record = await this.#record(username);
      if (!record) throw new KeystoreError('UserNotFound', `user doesn't exist: ${username}`);
      (await this.#authenticate(username, password, record)).fill(0);
      this.#revoke(username);
      const batch = this.#store.batch();
      for (const key of await this.#dataKeys(username)) batch.delete(key);
      await batch.delete(recordKey(username)).write();
      this.#log.info('keystore user deleted', { username });
    });
  }

  /** The user's record and all its data, still encrypted (the service cb58-encodes it). */
  async exportUser(username: string, password: string): Promise<Uint8Array> {
    checkInputs('ExportUser', username, password);
    checkUnicode(username, password);
    return this.#serial(username, async () => {
      const record = await this.#record(username);
      if (!record) throw new KeystoreError('UserNotFound', 'not found');
      (await this.#authenticate(username, password, record)).fill(0);
      const entries: ExportEntry[] = [];
      const start = USER_DATA_PREFIX_LENGTH;
      for await (const [k, v] of this.#store.iterate({ prefix: userDataPrefix(username) })) {
        if (k.length < start + CHAIN_ID_LENGTH) throw new KeystoreError('Corrupt', 'corrupt keystore data key');
        entries.push({ chainId: k.slice(start, start + CHAIN_ID_LENGTH), key: k.slice(start + CHAIN_ID_LENGTH), value: v });
      }
      const blob = encodeExport({ record, entries });
      this.#log.info('keystore user exported', { username, entries: entries.length });
      return blob;
    });
  }

  /**
   * Adds a user from an exportUser blob under `username` (which may differ from the original).
   * The password must match the imported record; strength is not checked (as the reference).
   */
  async importUser(username: string, password: string, exported: Uint8Array): Promise<void> {
    checkInputs('ImportUser', username, password);
    if (username === '') throw new KeystoreError('EmptyUsername', "username can't be the empty string");
    checkUnicode(username, password);
    return this.#serial(username, async () => {
      if (await this.#store.has(recordKey(username))) {
        throw new KeystoreError('UserExists', `user already exists: ${username}`);
      }
      const { record, entries } = decodeExport(exported);
      const { verifier, dataKey } = await deriveKeys(password, record.salt, record.kdf);
      try {
        if (!verifierMatches(verifier, record.verifier)) throw incorrectPassword(username);
        const base = userDataPrefix(username);
        const seen = new Set<string>();
        const batch = this.#store.batch();
        for (const key of await this.#dataKeys(username)) batch.delete(key);
        batch.put(recordKey(username), encodeRecord(record));
        entries.forEach((e, i) => {
          const full = new Uint8Array(base.length + e.chainId.length + e.key.length);
          full.set(base);
          full.set(e.chainId, base.length);
          full.set(e.key, base.length + e.chainId.length);
          const id = Buffer.from(full).toString('latin1');
          if (seen.has(id)) {
            throw new KeystoreError('BadExport', `invalid exported user: entry ${i} repeats a key`);
          }
          seen.add(id);
          try {
            open(dataKey, e.chainId, e.key, e.value);
          } catch {
            throw new KeystoreError('BadExport', `invalid exported user: entry ${i} fails authentication`);
          }
          batch.put(full, e.value);
        });
        await batch.write();
      } finally {
        dataKey.fill(0);
      }
      this.#throttle.reset(username);
      this.#log.info('keystore user imported', { username, entries: entries.length });
    });
  }

  /**
   * The user's encrypted store for one chain, after checking the password. Values are sealed on
   * write and opened on read; closing it does not close the keystore's store; deleteUser revokes it.
   */
  async openUserStore(username: string, password: string, chainId: Id): Promise<KeyValueStore> {
    checkInputs('OpenUserStore', username, password);
    checkUnicode(username, password);
    return this.#serial(username, async () => {
      const record = await this.#record(username);
      if (!record) throw new KeystoreError('UserNotFound', 'not found');
      const dataKey = await this.#authenticate(username, password, record);
      let handle = this.#handles.get(username);
      if (!handle) this.#handles.set(username, (handle = { revoked: false }));
      const chain = chainId.bytes;
      const store = new UserStore(this.#store, chainDataPrefix(username, chain), chain, dataKey, handle);
      dataKey.fill(0);
      return store;
    });
  }

  async #record(username: string): Promise<UserRecord | undefined> {
    const bytes = await this.#store.get(recordKey(username));
    return bytes && decodeRecord(bytes);
  }

  /** Checks the password (throttled); returns the data key (the caller zeroes it when done). */
  async #authenticate(username: string, password: string, record: UserRecord): Promise<Uint8Array> {
    const wait = this.#throttle.lockedFor(username);
    if (wait > 0) {
      throw new KeystoreError(
        'Throttled',
        `too many incorrect passwords for user ${goQuote(username)}; try again in ${Math.ceil(wait / 1000)} s`,
        { retryAfterMs: wait },
      );
    }
    const { verifier, dataKey } = await deriveKeys(password, record.salt, record.kdf);
    if (!verifierMatches(verifier, record.verifier)) {
      dataKey.fill(0);
      const failures = this.#throttle.fail(username);
      this.#log.warn('keystore incorrect password', { username, failures });
      throw incorrectPassword(username);
    }
    this.#throttle.reset(username);
    return dataKey;
  }

  /** Every data key of the user (all chains). */
  async #dataKeys(username: string): Promise<Uint8Array[]> {
    const keys: Uint8Array[] = [];
    for await (const [k] of this.#store.iterate({ prefix: userDataPrefix(username) })) keys.push(k);
    return keys;
  }

  /** Stores opened for the user stop working (their data is about to be deleted). */
  #revoke(username: string): void {
    const handle = this.#handles.get(username);
    if (handle) handle.revoked = true;
    this.#handles.delete(username);
  }

  /** Runs `fn` after every earlier operation on the same username has settled. */
  #serial<T>(username: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#queues.get(username) ?? Promise.resolve();
    const result = prev.then(fn);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.#queues.set(username, tail);
    void tail.then(() => {
      if (this.#queues.get(username) === tail) this.#queues.delete(username);
    });
    return result;
  }
}
