/**
 * A keystore user's P-Chain keys: the sdk's UserKeys (the reference's per-chain layout, §4.6), so an
 * exported user moves between nodes.
 */
import { UserKeys, type KeyValueStore } from '@cornice/sdk';

export function platformKeys(db: KeyValueStore): UserKeys {
  return new UserKeys(db, { chain: 'P-Chain' });
}
