import { defineService, method, p, result } from '@cornice/sdk';
import { MAX_EXPORT_BYTES } from '../../keystore/records.js';

// Lengths over 1024 are refused by the keystore with the reference's text; the parser bound only
// keeps absurd inputs out.
const username = () => p.string({ max: 4096 });
const password = () => p.string({ max: 4096 });
const credentials = () => p.object({ username: username(), password: password() });

/** keystore: users whose keys live encrypted on this node. Served at /ext/keystore. */
export const keystoreApi = defineService('keystore', {
  createUser: method({ params: credentials(), result: result<{ success: boolean }>(), doc: 'Create a user protected by a strong password' }),
  listUsers: method({ params: p.none(), result: result<{ users: string[] }>(), doc: 'Names of the users on this node' }),
  deleteUser: method({ params: credentials(), result: result<{ success: boolean }>(), doc: 'Delete a user and all its data' }),
  exportUser: method({ params: credentials(), result: result<{ user: string }>(), doc: 'The user as a cb58 blob, its data still encrypted' }),
  importUser: method({
    params: p.object({
      username: username(),
      password: password(),
      // The largest export exportUser makes; the string is length-checked before it is decoded.
      user: p.cb58({ maxBytes: MAX_EXPORT_BYTES }),
    }),
    result: result<{ success: boolean }>(),
    doc: 'Import an exported user (the password must be the one it was exported with)',
  }),
});
