/**
 * Storage layout and binary formats of the keystore (the node's binary codec: big-endian, `[]byte`
 * as u32 length + bytes, fixed arrays bare).
 *
 * Keys inside the keystore's store:
 *   [0x01] || utf8(username)                               -> user record
 *   [0x02] || sha256(utf8(username)) || chainId(32) || key  -> sealed value (see crypto.ts)
 *
 * User record: version u8 (1) | N u32 | r u32 | p u32 | salt [16] | verifier [32].
 * Export blob: version u8 (2) | N u32 | r u32 | p u32 | salt [16] | verifier [32] |
 *              u32 count | count × { chainId [32] | key []byte | sealed value []byte } | mac [32].
 *
 * The mac authenticates the whole blob (version, record, count, every entry in order): HMAC-SHA256
 * of every byte before it under a key derived from the user's data key (crypto.ts `exportMac`).
 * Sealed values alone are authenticated one by one, so without it an entry could be dropped, or
 * replaced by an older sealed value of the same key, and the blob would still import. Version 1
 * blobs had no mac and are refused.
 */
import { CodecError, concatBytes, Reader, sha256, utf8Encode, Writer } from '@cornice/sdk';
import { kdfParamsProblem, SALT_LENGTH, SEALED_OVERHEAD, VERIFIER_LENGTH, type KdfParams } from './crypto.js';
import { KeystoreError } from './errors.js';

export const RECORD_PREFIX = 0x01;
export const DATA_PREFIX = 0x02;
export const RECORD_VERSION = 1;
export const EXPORT_VERSION = 2;
/** Length of the mac that ends an export blob. */
export const EXPORT_MAC_LENGTH = 32;
export const CHAIN_ID_LENGTH = 32;
/** Length of [0x02] || sha256(username): the start of every data key of one user. */
export const USER_DATA_PREFIX_LENGTH = 1 + 32;

/**
 * Largest export blob. An entry is 32 + 4 + key + 4 + 33 + value bytes: ~150 for an address and its
 * 32-byte key, so 64 KiB holds ~400 of them. The bound is what importUser can take without holding
 * the event loop: the blob arrives as cb58, and base58 decoding and encoding are not linear in the
 * length. exportUser refuses to make anything bigger (TooLarge), and the importUser parameter is
 * bounded from it (api/keystore/api.ts). Test: api/keystore.test.ts "the largest export goes
 * through exportUser and importUser".
 */
export const MAX_EXPORT_BYTES = 64 * 1024;
/** Fewest bytes one export entry occupies: chainId + two lengths + the smallest sealed value. */
const MIN_ENTRY_BYTES = CHAIN_ID_LENGTH + 4 + 4 + SEALED_OVERHEAD;

export interface UserRecord {
  kdf: KdfParams;
  salt: Uint8Array;
  verifier: Uint8Array;
}

export interface ExportEntry {
  chainId: Uint8Array;
  key: Uint8Array;
  /** Still sealed under the user's data key. */
  value: Uint8Array;
}

export interface ExportedUser {
  record: UserRecord;
  entries: ExportEntry[];
}

/** A decoded export blob: its content, the bytes the mac covers, and the mac. */
export interface DecodedExport extends ExportedUser {
  body: Uint8Array;
  mac: Uint8Array;
}

export function recordKey(username: string): Uint8Array {
  return concatBytes(Uint8Array.of(RECORD_PREFIX), utf8Encode(username));
}

/** [0x02] || sha256(utf8(username)): the prefix of all of one user's data. */
export function userDataPrefix(username: string): Uint8Array {
  return concatBytes(Uint8Array.of(DATA_PREFIX), sha256(utf8Encode(username)));
}

/** The prefix of one user's data for one chain. */
export function chainDataPrefix(username: string, chainId: Uint8Array): Uint8Array {
  return concatBytes(userDataPrefix(username), chainId);
}

function writeRecordFields(w: Writer, r: UserRecord): Writer {
  return w.u32(r.kdf.N).u32(r.kdf.r).u32(r.kdf.p).fixedBytes(r.salt).fixedBytes(r.verifier);
}

function readRecordFields(r: Reader): UserRecord {
  const kdf = { N: r.u32(), r: r.u32(), p: r.u32() };
  const salt = r.fixedBytes(SALT_LENGTH);
  const verifier = r.fixedBytes(VERIFIER_LENGTH);
  return { kdf, salt, verifier };
}

export function encodeRecord(rec: UserRecord): Uint8Array {
  return writeRecordFields(new Writer().u8(RECORD_VERSION), rec).finish();
}

/** KeystoreError('Corrupt') when the stored record does not decode. */
export function decodeRecord(bytes: Uint8Array): UserRecord {
  try {
    const r = new Reader(bytes);
    if (r.u8() !== RECORD_VERSION) throw new CodecError('Invalid', 'unknown record version');
    const rec = readRecordFields(r);
    r.end();
    const problem = kdfParamsProblem(rec.kdf);
    if (problem) throw new CodecError('Invalid', problem);
    return rec;
  } catch (e) {
    throw new KeystoreError('Corrupt', 'corrupt user record', { reason: (e as Error).message });
  }
}

/**
 * The export blob of `user`, ended by `mac(body)`; KeystoreError('TooLarge') when it would exceed
 * MAX_EXPORT_BYTES.
 */
export function encodeExport(user: ExportedUser, mac: (body: Uint8Array) => Uint8Array): Uint8Array {
  let body: Uint8Array;
  try {
    const w = writeRecordFields(new Writer({ maxSize: MAX_EXPORT_BYTES - EXPORT_MAC_LENGTH }).u8(EXPORT_VERSION), user.record);
    w.array(user.entries, (w, e) => w.fixedBytes(e.chainId).bytes(e.key).bytes(e.value));
    body = w.finish();
  } catch (e) {
    if (e instanceof CodecError && e.code === 'TooLarge') {
      throw new KeystoreError('TooLarge', `user data is too large to export (limit ${MAX_EXPORT_BYTES} bytes)`);
    }
    throw e;
  }
  return concatBytes(body, mac(body));
}

/**
 * Decodes an export blob with a size-bounded reader (declared counts and lengths are checked against
 * the remaining input before anything is allocated). KeystoreError('BadExport') on any problem. The
 * mac is returned, not checked: checking it needs the password (keystore.ts).
 */
export function decodeExport(bytes: Uint8Array): DecodedExport {
  const bad = (reason: string): KeystoreError => new KeystoreError('BadExport', `invalid exported user: ${reason}`);
  if (!(bytes instanceof Uint8Array)) throw bad('not bytes');
  let user: DecodedExport;
  try {
    const r = new Reader(bytes, { maxSize: MAX_EXPORT_BYTES, maxSliceLength: MAX_EXPORT_BYTES });
    const version = r.u8();
    if (version === 1) throw bad('version 1 exports are not authenticated and are no longer accepted; export the user again');
    if (version !== EXPORT_VERSION) throw bad(`unknown version ${version}`);
    const record = readRecordFields(r);
    const entries = r.array(
      (r) => ({ chainId: r.fixedBytes(CHAIN_ID_LENGTH), key: r.bytes(), value: r.bytes() }),
      { minItemSize: MIN_ENTRY_BYTES },
    );
    const mac = r.fixedBytes(EXPORT_MAC_LENGTH);
    r.end();
    user = { record, entries, body: bytes.subarray(0, bytes.length - EXPORT_MAC_LENGTH), mac };
  } catch (e) {
    if (e instanceof KeystoreError) throw e;
    throw bad((e as Error).message);
  }
  const problem = kdfParamsProblem(user.record.kdf);
  if (problem) throw bad(problem);
  return user;
}
