/**
 * A keystore user's X-Chain keys (the sdk's UserKeys: the reference's per-chain layout) and the
 * keychain the service signs with.
 */
import { UserKeys, type PrivateKey, type ShortId } from '@cornice/sdk';

/** One user's keys on an asset chain. */
export function userKeys(db: import('@cornice/sdk').KeyValueStore): UserKeys {
  return new UserKeys(db, { chain: 'X-Chain' });
}

/** Every key of the user, in the order added, as a keychain. */
export async function keychainOf(keys: UserKeys): Promise<Keychain> {
  return new Keychain(await keys.keys());
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
