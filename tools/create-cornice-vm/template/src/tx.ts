/**
 * The VM's one transaction type: set `key` to `value`. A tx is identified by the SHA-256 of its
 * bytes, so the same key and value always make the same tx (the mempool refuses a duplicate).
 */
import { Id, type Reader, Writer, sha256 } from '@cornice/sdk';
import { VmError } from './errors.js';

/** In characters. Together with MAX_TXS_PER_BLOCK they keep a block under the codec's 256 KiB. */
export const MAX_KEY_LENGTH = 64;
export const MAX_VALUE_LENGTH = 1024;

export interface SetTx {
  readonly id: Id;
  readonly key: string;
  readonly value: string;
  readonly bytes: Uint8Array;
}

/** A tx from its fields; VmError('InvalidTx') when they break the rules. */
export function makeTx(key: string, value: string): SetTx {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw new VmError('InvalidTx', `key must be 1 to ${MAX_KEY_LENGTH} characters`);
  if (value.length > MAX_VALUE_LENGTH) throw new VmError('InvalidTx', `value must be at most ${MAX_VALUE_LENGTH} characters`);
  const bytes = new Writer().str(key).str(value).finish();
  return { id: Id.fromBytes(sha256(bytes)), key, value, bytes };
}

export function writeTx(w: Writer, tx: SetTx): void {
  w.str(tx.key).str(tx.value);
}

/** Reads one tx (inside a block) and checks its rules. */
export function readTx(r: Reader): SetTx {
  return makeTx(r.str(), r.str());
}
