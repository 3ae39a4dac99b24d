import { bindService, cb58Encode, type BoundService } from '@cornice/sdk';
import { KeystoreError, type Keystore } from '../../keystore/keystore.js';
import { keystoreApi } from './api.js';

export interface KeystoreServiceOptions {
  /**
   * Whether keystore.listUsers names the users (--api-keystore-list-users-enabled, default off):
   * usernames are half of every credential, so they are not public by default (avalanchego
   * deprecated listUsers in v1.9.12 and later dropped the keystore). Test: keystore.test.ts
   * "listUsers is off by default".
   */
  listUsers?: boolean;
}

export const LIST_USERS_DISABLED =
  'keystore.listUsers is disabled: usernames are not public on this node (start it with --api-keystore-list-users-enabled to serve them)';

export function keystoreService(keystore: Keystore, opts: KeystoreServiceOptions = {}): BoundService {
  return bindService(keystoreApi, {
    async createUser({ username, password }) {
      await keystore.createUser(username, password);
      return { success: true };
    },
    async listUsers() {
      if (!opts.listUsers) throw new KeystoreError('Disabled', LIST_USERS_DISABLED);
      return { users: await keystore.listUsers() };
    },
    async deleteUser({ username, password }) {
      await keystore.deleteUser(username, password);
      return { success: true };
    },
    async exportUser({ username, password }) {
      return { user: cb58Encode(await keystore.exportUser(username, password)) };
    },
    async importUser({ username, password, user }) {
      await keystore.importUser(username, password, user);
      return { success: true };
    },
  });
}
