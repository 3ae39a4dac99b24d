/**
 * A keystore user's P-Chain keys, in the user's encrypted store for the platform chain, laid out as
 * the reference's (§4.6), so an exported user moves between the two nodes:
 *   key = 20-byte address  -> value = the 32-byte private key
 *   key = 32 zero bytes    -> value = codec []ShortID: the addresses, in the order they were added
 * The store encrypts values; keys (addresses) are not secret.
 */
import { PrivateKey, Reader, ShortId, Writer, type KeyValueStore } from '@cornice/sdk';
import { PlatformError } from './errors.js';

/** Where the address list lives: 32 zero bytes (no address key is that long). */
export const ADDRESSES_KEY = new Uint8Array(32);

/** Keys one user may hold on the P-Chain: bounds what a call reads, and keeps the user exportable (keystore export limit). */
export const MAX_KEYS_PER_USER = 256;

export function encodeAddresses(addresses: readonly ShortId[]): Uint8Array {
  return new Writer().array(addresses, (w, a) => w.shortId(a)).finish();
}

export function decodeAddresses(bytes: Uint8Array): ShortId[] {
  const r = new Reader(bytes);
  const out = r.array((x) => x.shortId(), { minItemSize: ShortId.LENGTH });
  r.end();
  return out;
}

export class PlatformKeys {
  readonly #db: KeyValueStore;

  constructor(db: KeyValueStore) {
    this.#db = db;
  }

  /** The user's addresses, in the order they were added. */
  async addresses(): Promise<ShortId[]> {
    const bytes = await this.#db.get(ADDRESSES_KEY);
    if (bytes === undefined) return [];
    try {
      return decodeAddresses(bytes);
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

  /**
   * Stores `key` and lists its address (once: adding a key the user holds changes nothing). The key
   * and the list are written in one batch. Not safe against a concurrent add for the same user: the
   * caller serialises adds.
   */
  async add(key: PrivateKey): Promise<ShortId> {
    const address = key.address;
    const addresses = await this.addresses();
    if (addresses.some((a) => a.equals(address))) return address;
    if (addresses.length >= MAX_KEYS_PER_USER) {
      throw new PlatformError('Limit', `the user already holds the most P-Chain keys allowed (${MAX_KEYS_PER_USER})`);
    }
    const secret = key.toBytes();
    try {
      await this.#db.batch().put(address.bytes, secret).put(ADDRESSES_KEY, encodeAddresses([...addresses, address])).write();
    } finally {
      secret.fill(0);
    }
    return address;
  }
}

function corrupt(message: string): PlatformError {
  return new PlatformError('CorruptDatabase', message);
}
