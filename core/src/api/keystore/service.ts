import { bindService, cb58Encode, type BoundService } from '@cornice/sdk';
import type { Keystore } from '../../keystore/keystore.js';
import { keystoreApi } from './api.js';

export function keystoreService(keystore: Keystore): BoundService {
  return bindService(keystoreApi, {
    async createUser({ username, password }) {
      await keystore.createUser(username, password);
      return { success: true };
    },
    async listUsers() {
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
