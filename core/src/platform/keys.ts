/**
 * A keystore user's P-Chain keys: the sdk's UserKeys (the reference node's per-chain layout), so an
 * exported user moves between nodes.
 */
import { UserKeys, type KeyValueStore } from '@cornice/sdk';

export function platformKeys(db: KeyValueStore): UserKeys {
  return new UserKeys(db, { chain: 'P-Chain' });
}
