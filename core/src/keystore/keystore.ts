/**
 * # Keystore
 *
 * The node's users: named, password-protected areas where chains keep user keys
 * (api/keystore/API.md). This module is the domain logic only; the JSON-RPC
 * binding is `api/keystore/service.ts`.
 *
 * - **Passwords are never stored or logged.** scrypt (default N=2^15, r=8, p=1: 32 MiB, run off the
 *   event loop) over the password and a random 16-byte per-user salt gives 64 bytes: SHA-256 of the
 *   first 32 is the stored verifier (compared in constant time), the last 32 are the data key,
 *   which is never stored. The KDF parameters live in each user record, so the default can change.
 * - **KDF runs are bounded node-wide** (kdf-limiter.ts): at most 2 at once, 32 more waiting, any
 *   further caller gets "keystore busy". An imported record whose scrypt N, r or p is above this
 *   node's own is refused before scrypt runs.
 * - **Data is encrypted at rest**: each value is AES-256-GCM under the data key with a random nonce
 *   and AAD = chainId || key. Keys are not encrypted (as the reference). The username is not in the
 *   AAD, so an export can be imported under another name.
 * - **Layout** (inside the store given, already reserved for the keystore): records at
 *   [0x01] || utf8(username), data at [0x02] || sha256(utf8(username)) || chainId || key
 *   (records.ts). deleteUser and importUser write in one atomic batch.
 * - **Usernames** (user-names.ts) are compared in NFC; a new one may not hold control or bidi
 *   control characters. The list of users is kept in memory (read once), so listUsers opens no
 *   iterator.
 * - **Export** (exportUser -> importUser, possibly on another node): the record and every sealed
 *   entry, still encrypted, then a mac over all of it under a key derived from the data key.
 *   importUser checks the password against the imported record, then the mac (an entry removed,
 *   reordered or replaced by an older sealed value is refused), then every entry, before writing
 *   anything.
 * - **Throttling**: after 5 wrong passwords in a row *from one client* for a user, that client's
 *   attempts for that user are refused without running the KDF for 1 s, 2 s, 4 s, ... up to 60 s
 *   (throttle.ts). The client is `clientOf()` (the HTTP layer's key: the remote IP, or the
 *   connection for loopback clients), so no one can lock the owner out by failing on purpose;
 *   calls for one user still run one at a time, each with a full KDF, which bounds how fast anyone
 *   can guess. importUser's wrong passwords count too, against the target name and against the
 *   blob (its salt). Test: keystore/throttle.test.ts "another client's failures".
 * - **No cheap existence oracle**: a method naming a user that does not exist (deleteUser,
 *   exportUser, the chains' openUser) and createUser/importUser of one that does, run one KDF on a
 *   dummy record before answering, so they take what a real password check takes, and a missing
 *   user counts as a wrong password for the throttle. keystore.listUsers is off by default (api/
 *   keystore/service.ts). Test: keystore/keystore.test.ts "missing users cost a KDF".
 * - **Strength**: the composition rule (password.ts), then zxcvbn score >= 2 with the username as a user input,
 *   scored in a worker thread started on first use (password.ts explains why).
 * - **Concurrency**: calls for the same username run one after another, so two concurrent
 *   createUser calls cannot both succeed and deleteUser cannot interleave with an export.
 *
 * Files: keystore.ts (this API), password.ts (limits, strength), crypto.ts (KDF, AEAD, export mac),
 * kdf-limiter.ts, records.ts (layout, codecs), user-names.ts, user-store.ts (the encrypted
 * per-chain store), throttle.ts, zxcvbn-worker.ts, errors.ts (KeystoreError, Go-style quoting).
 */
import {
  constantTimeEqual,
  silentLogger,
  toHex,
  utf8Decode,
  type Id,
  type KeyValueStore,
  type Logger,
} from '@cornice/sdk';
import {
  DEFAULT_KDF,
  deriveKeys,
  exportMac,
  kdfParamsProblem,
  open,
  randomSalt,
  verifierMatches,
  type DerivedKeys,
  type KdfParams,
} from './crypto.js';
import { goQuote, KeystoreError } from './errors.js';
import { DEFAULT_KDF_LIMITS, KdfLimiter } from './kdf-limiter.js';
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
import { canonicalName, newNameProblem, UserNames } from './user-names.js';
import { UserStore, type UserHandle } from './user-store.js';

export { KeystoreError, type KeystoreErrorCode } from './errors.js';
export { DEFAULT_KDF, type KdfParams } from './crypto.js';
export { DEFAULT_KDF_LIMITS, KdfLimiter, type KdfLimits } from './kdf-limiter.js';
export { DEFAULT_THROTTLE, type ThrottleOptions } from './throttle.js';
export { UserStore } from './user-store.js';

export interface KeystoreOptions {
  /** Already a prefixed sub-store reserved for the keystore. */
  store: KeyValueStore;
  log?: Logger;
  /** Injected clock, ms (throttling). */
  now?: () => number;
  /** scrypt cost for new users; default N=2^15, r=8, p=1 (~32 MiB). Imports above it are refused. */
  kdf?: KdfParams;
  /** The bound on KDF runs in flight and waiting; default a limiter of DEFAULT_KDF_LIMITS (2 and 32). */
  kdfLimiter?: KdfLimiter;
  /** Wrong-password throttling; default 5 free attempts, 1000 ms doubling up to 60000 ms. */
  throttle?: ThrottleOptions;
  /** The createUser strength rule (tests inject one); default password.ts isStrongPassword. */
  isStrongPassword?: (password: string, username: string) => Promise<boolean>;
  /** The client making the current call (throttle key; see Throttling); default: one client for all. */
  clientOf?: () => string | undefined;
}

const WEAK_PASSWORD =
  'Failed to create user as the given password is too weak. A stronger password is one of 8 or more characters containing attributes of upper and lowercase letters, numbers, and/or special characters';

function incorrectPassword(username: string): KeystoreError {
  return new KeystoreError('IncorrectPassword', `incorrect password for user ${goQuote(username)}`);
}

function tooLong(method: string): KeystoreError {
  return new KeystoreError(
    'TooLong',
    `${method} call rejected due to username or password exceeding maximum length of ${MAX_INPUT_CHARS} chars`,
  );
}

/** The length and Unicode checks every method runs on its inputs, named after the reference's text. */
function checkInputs(method: string, username: string, password?: string): void {
  if (exceedsChars(username) || (password !== undefined && exceedsChars(password))) throw tooLong(method);
}

function checkUnicode(username: string, password?: string): void {
  if (hasLoneSurrogate(username)) throw new KeystoreError('InvalidInput', 'username is not valid Unicode');
  if (password !== undefined && hasLoneSurrogate(password)) {
    throw new KeystoreError('InvalidInput', 'password is not valid Unicode');
  }
}

/** The canonical form of a name given to a method (after checkInputs and checkUnicode). */
function canonical(method: string, username: string): string {
  const name = canonicalName(username);
  if (exceedsChars(name)) throw tooLong(method); // NFC can lengthen a few scripts' characters
  return name;
}

/** The canonical form of a name for a new user: no control characters either. */
function newName(method: string, username: string): string {
  const problem = newNameProblem(username);
  if (problem) throw new KeystoreError('InvalidInput', problem);
  return canonical(method, username);
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

function formatKdf(k: KdfParams): string {
  return `N=${k.N}, r=${k.r}, p=${k.p}`;
}

/** Throttle key of a client's attempts at a user (a NUL is in no client key, so none collide). */
function userThrottleKey(client: string, name: string): string {
  return `${client}\0${name}`;
}

/** Throttle key of a client's attempts at an export blob (its salt). */
function blobThrottleKey(client: string, record: UserRecord): string {
  return `${client}\0\0import:${toHex(record.salt)}`;
}

export class Keystore {
  readonly #store: KeyValueStore;
  readonly #log: Logger;
  readonly #kdf: KdfParams;
  readonly #kdfLimiter: KdfLimiter;
  readonly #throttle: Throttle;
  readonly #isStrongPassword: (password: string, username: string) => Promise<boolean>;
  readonly #clientOf: () => string | undefined;
  /** The salt of the dummy record a lookup of a missing user derives against. */
  readonly #dummySalt = randomSalt();
  /** The users' names, read from the store on first use. */
  #names: Promise<UserNames> | undefined;
  /** Tail of each (canonical) username's queue of operations (removed when it drains). */
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
    this.#kdfLimiter = opts.kdfLimiter ?? new KdfLimiter(DEFAULT_KDF_LIMITS);
    const throttle = opts.throttle ?? DEFAULT_THROTTLE;
    checkThrottleOptions(throttle);
    this.#throttle = new Throttle({ ...throttle }, opts.now ?? Date.now);
    this.#isStrongPassword = opts.isStrongPassword ?? isStrongPassword;
    this.#clientOf = opts.clientOf ?? (() => undefined);
  }

  async createUser(username: string, password: string): Promise<void> {
    checkInputs('CreateUser', username, password);
    if (username === '') throw new KeystoreError('EmptyUsername', "username can't be the empty string");
    checkUnicode(username, password);
    const name = newName('CreateUser', username);
    const key = userThrottleKey(this.#client(), name);
    return this.#serial(name, async () => {
      const names = await this.#userNames();
      if (names.resolve(name) !== undefined) {
        await this.#dummyDerive(password);
        throw new KeystoreError('UserExists', `user already exists: ${username}`);
      }
      if (!(await this.#isStrongPassword(password, name))) throw new KeystoreError('WeakPassword', WEAK_PASSWORD);
      const salt = randomSalt();
      const { verifier, dataKey } = await this.#derive(password, salt, this.#kdf);
      dataKey.fill(0);
      const record: UserRecord = { kdf: { ...this.#kdf }, salt, verifier };
      const batch = this.#store.batch();
      // Data left under this name by an interrupted or raced writer would not decrypt: drop it.
      for (const key of await this.#dataKeys(name)) batch.delete(key);
      await batch.put(recordKey(name), encodeRecord(record)).write();
      names.add(name);
      this.#throttle.reset(key);
      this.#log.info('keystore user created', { username: name });
    });
  }

  /** Usernames in byte order of their UTF-8; [] when none. Served from memory. */
  async listUsers(): Promise<string[]> {
    return (await this.#userNames()).list();
  }

  async deleteUser(username: string, password: string): Promise<void> {
    return this.#asUser('DeleteUser', username, password, `user doesn't exist: ${username}`, async (stored) => {
      this.#revoke(stored);
      const batch = this.#store.batch();
      for (const key of await this.#dataKeys(stored)) batch.delete(key);
      await batch.delete(recordKey(stored)).write();
      (await this.#userNames()).remove(stored);
      this.#log.info('keystore user deleted', { username: stored });
    });
  }

  /** The user's record and all its data, still encrypted, with a mac over all of it (the service cb58-encodes it). */
  async exportUser(username: string, password: string): Promise<Uint8Array> {
    return this.#asUser('ExportUser', username, password, 'not found', async (stored, record, dataKey) => {
      const entries: ExportEntry[] = [];
      const start = USER_DATA_PREFIX_LENGTH;
      for await (const [k, v] of this.#store.iterate({ prefix: userDataPrefix(stored) })) {
        if (k.length < start + CHAIN_ID_LENGTH) throw new KeystoreError('Corrupt', 'corrupt keystore data key');
        entries.push({ chainId: k.slice(start, start + CHAIN_ID_LENGTH), key: k.slice(start + CHAIN_ID_LENGTH), value: v });
      }
      const blob = encodeExport({ record, entries }, (body) => exportMac(dataKey, body));
      this.#log.info('keystore user exported', { username: stored, entries: entries.length });
      return blob;
    });
  }

  /**
   * Adds a user from an exportUser blob under `username` (which may differ from the original).
   * The password must match the imported record; strength is not checked (as the reference).
   * Nothing is written unless the whole blob is authentic.
   */
  async importUser(username: string, password: string, exported: Uint8Array): Promise<void> {
    checkInputs('ImportUser', username, password);
    if (username === '') throw new KeystoreError('EmptyUsername', "username can't be the empty string");
    checkUnicode(username, password);
    const name = newName('ImportUser', username);
    const client = this.#client();
    const key = userThrottleKey(client, name);
    return this.#serial(name, async () => {
      const names = await this.#userNames();
      if (names.resolve(name) !== undefined) {
        await this.#dummyDerive(password);
        throw new KeystoreError('UserExists', `user already exists: ${username}`);
      }
      const { record, entries, body, mac } = decodeExport(exported);
      const own = this.#kdf;
      if (record.kdf.N > own.N || record.kdf.r > own.r || record.kdf.p > own.p) {
        throw new KeystoreError(
          'BadExport',
          `invalid exported user: its scrypt parameters (${formatKdf(record.kdf)}) exceed this node's (${formatKdf(own)})`,
        );
      }
      const blobKey = blobThrottleKey(client, record);
      this.#checkThrottle(key, name);
      this.#checkThrottle(blobKey, name);
      const { verifier, dataKey } = await this.#derive(password, record.salt, record.kdf);
      try {
        if (!verifierMatches(verifier, record.verifier)) {
          const failures = this.#throttle.fail(key);
          this.#throttle.fail(blobKey);
          this.#log.warn('keystore incorrect password', { username: name, failures, method: 'importUser' });
          throw incorrectPassword(username);
        }
        if (!constantTimeEqual(exportMac(dataKey, body), mac)) {
          throw new KeystoreError(
            'BadExport',
            'invalid exported user: the export was modified (its authentication code does not match); nothing was imported',
          );
        }
        const base = userDataPrefix(name);
        const seen = new Set<string>();
        const batch = this.#store.batch();
        for (const key of await this.#dataKeys(name)) batch.delete(key);
        batch.put(recordKey(name), encodeRecord(record));
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
      names.add(name);
      this.#throttle.reset(key);
      this.#throttle.reset(blobKey);
      this.#log.info('keystore user imported', { username: name, entries: entries.length });
    });
  }

  /**
   * The user's encrypted store for one chain, after checking the password. Values are sealed on
   * write and opened on read; closing it does not close the keystore's store; deleteUser revokes it.
   */
  async openUserStore(username: string, password: string, chainId: Id): Promise<KeyValueStore> {
    return this.#asUser('OpenUserStore', username, password, 'not found', async (stored, _record, dataKey) => {
      let handle = this.#handles.get(stored);
      if (!handle) this.#handles.set(stored, (handle = { revoked: false }));
      const chain = chainId.bytes;
      return new UserStore(this.#store, chainDataPrefix(stored, chain), chain, dataKey, handle); // keeps a copy of the key
    });
  }

  /**
   * The common path of the methods that act as an existing user: input checks, then in the user's
   * queue: find the user (`notFound` is the UserNotFound text), check the password (throttled),
   * run `fn` with the stored name, the record and the data key, and zero the key.
   */
  #asUser<T>(
    method: string,
    username: string,
    password: string,
    notFound: string,
    fn: (stored: string, record: UserRecord, dataKey: Uint8Array) => Promise<T>,
  ): Promise<T> {
    checkInputs(method, username, password);
    checkUnicode(username, password);
    const name = canonical(method, username);
    const key = userThrottleKey(this.#client(), name);
    return this.#serial(name, async () => {
      const found = await this.#find(name);
      if (!found) {
        // As costly as a wrong password, and counted as one (no cheap probe for who exists).
        this.#checkThrottle(key, name);
        await this.#dummyDerive(password);
        this.#throttle.fail(key);
        throw new KeystoreError('UserNotFound', notFound);
      }
      const dataKey = await this.#authenticate(key, name, password, found.record);
      try {
        return await fn(found.stored, found.record, dataKey);
      } finally {
        dataKey.fill(0);
      }
    });
  }

  /** The users' names, read with one scan of the records on first use (retried if that fails). */
  #userNames(): Promise<UserNames> {
    this.#names ??= (async () => {
      const stored: string[] = [];
      for await (const [key] of this.#store.iterate({ prefix: Uint8Array.of(RECORD_PREFIX) })) {
        stored.push(utf8Decode(key.subarray(1)));
      }
      return new UserNames(stored);
    })().catch((e: unknown) => {
      this.#names = undefined;
      throw e;
    });
    return this.#names;
  }

  /** The stored name and record of the user whose canonical name is `name`, or undefined. */
  async #find(name: string): Promise<{ stored: string; record: UserRecord } | undefined> {
    const stored = (await this.#userNames()).resolve(name);
    if (stored === undefined) return undefined;
    const bytes = await this.#store.get(recordKey(stored));
    return bytes && { stored, record: decodeRecord(bytes) };
  }

  /** scrypt through the node-wide limiter. */
  #derive(password: string, salt: Uint8Array, kdf: KdfParams): Promise<DerivedKeys> {
    return this.#kdfLimiter.run(() => deriveKeys(password, salt, kdf));
  }

  /** KeystoreError('Throttled') while `key` (a client's attempts at a user or blob) is locked; `username` names it in the message. */
  #checkThrottle(key: string, username: string): void {
    const wait = this.#throttle.lockedFor(key);
    if (wait > 0) {
      throw new KeystoreError(
        'Throttled',
        `too many incorrect passwords for user ${goQuote(username)} from this client; try again in ${Math.ceil(wait / 1000)} s`,
        { code: 'Throttled', retryAfterMs: wait },
      );
    }
  }

  /** Checks the password (throttled under `key`); returns the data key (the caller zeroes it when done). */
  async #authenticate(key: string, name: string, password: string, record: UserRecord): Promise<Uint8Array> {
    this.#checkThrottle(key, name);
    const { verifier, dataKey } = await this.#derive(password, record.salt, record.kdf);
    if (!verifierMatches(verifier, record.verifier)) {
      dataKey.fill(0);
      const failures = this.#throttle.fail(key);
      this.#log.warn('keystore incorrect password', { username: name, failures });
      throw incorrectPassword(name);
    }
    this.#throttle.reset(key);
    return dataKey;
  }

  /** The KDF at this node's cost on a dummy record: what checking a password costs, for answers that need none. */
  async #dummyDerive(password: string): Promise<void> {
    const { dataKey } = await this.#derive(password, this.#dummySalt, this.#kdf);
    dataKey.fill(0);
  }

  /** The current caller's client key ('' outside a request: the node's own calls share one). */
  #client(): string {
    return this.#clientOf() ?? '';
  }

  /** Every data key of the user (all chains). */
  async #dataKeys(stored: string): Promise<Uint8Array[]> {
    const keys: Uint8Array[] = [];
    for await (const [k] of this.#store.iterate({ prefix: userDataPrefix(stored) })) keys.push(k);
    return keys;
  }

  /** Stores opened for the user stop working (their data is about to be deleted). */
  #revoke(stored: string): void {
    const handle = this.#handles.get(stored);
    if (handle) handle.revoked = true;
    this.#handles.delete(stored);
  }

  /** Runs `fn` after every earlier operation on the same username has settled. */
  #serial<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#queues.get(name) ?? Promise.resolve();
    const result = prev.then(fn);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.#queues.set(name, tail);
    void tail.then(() => {
      if (this.#queues.get(name) === tail) this.#queues.delete(name);
    });
    return result;
  }
}
