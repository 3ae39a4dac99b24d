/**
 * A keystore user's X-Chain keys, in the user's encrypted store for this chain, laid out as the
 * reference's (§4.6) so that an exported user moves between the two nodes:
 *   key = 20-byte address  -> value = the 32-byte private key
 *   key = 32 zero bytes    -> value = codec []ShortID: the addresses, in the order they were added
 * The store encrypts values; keys (addresses) are not secret.
 */
import { PrivateKey, Reader, ShortId, Writer, type KeyValueStore } from '@cornice/sdk';
import { AvmError } from './errors.js';

/** Where the address list lives: 32 zero bytes (no address key is that long). */
export const ADDRESS_LIST_KEY = new Uint8Array(32);

/**
 * Keys one user may hold on this chain: bounds what a call reads and signs with, and keeps the
 * user exportable (keystore.exportUser has a size limit).
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

/** One user's keys on this chain, over its open store (the caller closes the store). */
export class UserKeys {
  readonly #db: KeyValueStore;

  constructor(db: KeyValueStore) {
    this.#db = db;
  }

  /** The user's addresses, in the order they were added (the first one takes change). */
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

  /** Every key of the user, in address order (a keychain). */
  async keychain(): Promise<Keychain> {
    const keys: PrivateKey[] = [];
    for (const address of await this.addresses()) {
      const key = await this.key(address);
      if (!key) throw corrupt(`the user's address list names ${address}, whose key is missing`);
      keys.push(key);
    }
    return new Keychain(keys);
  }

  /**
   * Stores `key` and lists its address once (adding a key the user holds changes nothing, where the
   * reference listed it again). Key and list are written in one batch. Not safe against a
   * concurrent add for the same user: the caller serialises adds.
   */
  async add(key: PrivateKey): Promise<ShortId> {
    const address = key.address;
    const addresses = await this.addresses();
    if (addresses.some((a) => a.equals(address))) return address;
    if (addresses.length >= MAX_KEYS_PER_USER) {
      throw new AvmError('Limit', `the user already holds the most X-Chain keys allowed (${MAX_KEYS_PER_USER})`);
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

/** What spending an output takes: the indices of the signing addresses (ascending) and their keys. */
export interface Spender {
  sigIndices: number[];
  signers: PrivateKey[];
}

/** A user's keys, first added first (the reference's secp256k1fx keychain). */
export class Keychain {
  readonly #byAddress = new Map<string, PrivateKey>();

  constructor(readonly keys: readonly PrivateKey[]) {
    for (const k of keys) this.#byAddress.set(k.address.key, k);
  }

  /** The first key's address: where change goes. */
  get first(): ShortId | undefined {
    return this.keys[0]?.address;
  }

  get(address: ShortId): PrivateKey | undefined {
    return this.#byAddress.get(address.key);
  }

  /** How these keys meet `threshold` of `addresses` (the reference's keychain Match); undefined when they cannot. */
  match(owners: OwnersLike): Spender | undefined {
    const found = matchOwners(owners, (a) => this.#byAddress.get(a.key));
    return found && { sigIndices: found.sigIndices, signers: found.signers };
  }
}

export interface OwnersLike {
  threshold: number;
  addresses: readonly ShortId[];
}

/**
 * The first `threshold` of the owners' addresses, in list order, that `signer` knows (the
 * reference's rule for which addresses sign): their indices and what `signer` gave for each;
 * undefined when fewer than `threshold` are known.
 */
export function matchOwners<T>(owners: OwnersLike, signer: (address: ShortId) => T | undefined): { sigIndices: number[]; signers: T[] } | undefined {
  const sigIndices: number[] = [];
  const signers: T[] = [];
  for (let i = 0; i < owners.addresses.length && sigIndices.length < owners.threshold; i++) {
    const s = signer(owners.addresses[i]!);
    if (s === undefined) continue;
    sigIndices.push(i);
    signers.push(s);
  }
  return sigIndices.length === owners.threshold ? { sigIndices, signers } : undefined;
}

function corrupt(message: string): AvmError {
  return new AvmError('CorruptDatabase', message);
}
