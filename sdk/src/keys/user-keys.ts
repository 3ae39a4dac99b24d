/**
 * A keystore user's keys on one chain, in the user's encrypted per-chain store (ChainContext
 * `keystore.openUser`), laid out as the reference node's chains lay them out, so an
 * exported user moves between nodes:
 *   key = 20-byte address  -> value = the 32-byte private key
 *   key = 32 zero bytes    -> value = codec []ShortID: the addresses, in the order they were added
 * The store encrypts values; keys (addresses) are not secret. The platform chain and the asset VM
 * both keep their users' keys this way; any VM may.
 */
import { NodeError } from '../errors/errors.js';
import { Reader } from '../codec/reader.js';
import { Writer } from '../codec/writer.js';
import { PrivateKey } from '../crypto/secp256k1.js';
import type { KeyValueStore } from '../db/store.js';
import { ShortId } from '../ids/id.js';

/** `Limit`: the user holds the most keys allowed. `CorruptDatabase`: a stored list or key does not decode. */
export class UserKeysError extends NodeError<'Limit' | 'CorruptDatabase'> {}

/** Where the address list lives: 32 zero bytes (no address key is that long). */
export const ADDRESS_LIST_KEY = new Uint8Array(32);

/**
 * Keys one user may hold on a chain by default: bounds what a call reads and signs with, and keeps
 * the user exportable (keystore.exportUser has a size limit).
 */
export const MAX_KEYS_PER_USER = 256;

/** codec []ShortID: u32 count, then 20 bytes each. */
export function encodeAddressList(addresses: readonly ShortId[]): Uint8Array {
  return new Writer().array(addresses, (w, a) => w.shortId(a)).finish();
}

export function decodeAddressList(bytes: Uint8Array): ShortId[] {
  const r = new Reader(bytes);
  const out = r.array((x) => x.shortId(), { minItemSize: ShortId.LENGTH });
  r.end();
  return out;
}

/** One user's keys on one chain, over its open store (the caller closes the store). */
export class UserKeys {
  readonly #db: KeyValueStore;
  readonly #chain: string;
  readonly #maxKeys: number;

  /** `chain` names the chain in messages (`X-Chain`, `P-Chain`). */
  constructor(db: KeyValueStore, opts: { chain?: string; maxKeys?: number } = {}) {
    this.#db = db;
    this.#chain = opts.chain ?? 'chain';
    this.#maxKeys = opts.maxKeys ?? MAX_KEYS_PER_USER;
  }

  /** The user's addresses, in the order they were added. */
  async addresses(): Promise<ShortId[]> {
    const bytes = await this.#db.get(ADDRESS_LIST_KEY);
    if (bytes === undefined) return [];
    try {
      return decodeAddressList(bytes);
    } catch (e) {
      throw corrupt(`the user's address list does not decode (${(e as Error).message})`);
    }
  }

  /** The private key of `address`, or undefined when the user holds none. */
  async key(address: ShortId): Promise<PrivateKey | undefined> {
    const bytes = await this.#db.get(address.bytes);
    if (bytes === undefined) return undefined;
    let key: PrivateKey;
    try {
      key = PrivateKey.fromBytes(bytes);
    } catch {
      throw corrupt(`the stored key of ${address} is not a private key`);
    } finally {
      bytes.fill(0);
    }
    if (!key.address.equals(address)) throw corrupt(`the key stored under ${address} belongs to another address`);
    return key;
  }

  /** Every key of the user, in the order added. */
  async keys(): Promise<PrivateKey[]> {
    const keys: PrivateKey[] = [];
    for (const address of await this.addresses()) {
      const key = await this.key(address);
      if (!key) throw corrupt(`the user's address list names ${address}, whose key is missing`);
      keys.push(key);
    }
    return keys;
  }

  /**
   * Stores `key` and lists its address once (adding a key the user holds changes nothing). Key and
   * list are written in one batch. Not safe against a concurrent add for the same user: the caller
   * serialises adds.
   */
  async add(key: PrivateKey): Promise<ShortId> {
    const address = key.address;
    const addresses = await this.addresses();
    if (addresses.some((a) => a.equals(address))) return address;
    if (addresses.length >= this.#maxKeys) {
      throw new UserKeysError('Limit', `the user already holds the most ${this.#chain} keys allowed (${this.#maxKeys})`);
    }
    const secret = key.toBytes();
    try {
      await this.#db.batch().put(address.bytes, secret).put(ADDRESS_LIST_KEY, encodeAddressList([...addresses, address])).write();
    } finally {
      secret.fill(0);
    }
    return address;
  }
}

function corrupt(message: string): UserKeysError {
  return new UserKeysError('CorruptDatabase', message);
}
