import * as assert from 'uvu/assert';
import { Id, MemoryStore } from '@cornice/sdk';
import { deriveKeys, exportMac } from '../../src/keystore/crypto.js';
import { Keystore, KeystoreError, type KeystoreErrorCode, type KeystoreOptions } from '../../src/keystore/keystore.js';
import { decodeExport, encodeExport, type ExportEntry } from '../../src/keystore/records.js';

/** Cheap scrypt parameters for tests (the default-cost test is in defaults.test.ts). */
export const FAST_KDF = { N: 16, r: 1, p: 1 };
export const STRONG = 'Tr0ub4dor&3-horse';
export const STRONG2 = 'Correct-Battery-9!staple';

export function chain(n: number): Id {
  const b = new Uint8Array(32);
  b.fill(n);
  return Id.fromBytes(b);
}

export const bytes = (s: string) => new TextEncoder().encode(s);
export const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

export interface Fixture {
  store: MemoryStore;
  ks: Keystore;
  clock: { t: number };
}

export function fixture(opts: Partial<KeystoreOptions> = {}): Fixture {
  const store = new MemoryStore();
  const clock = { t: 1_000_000 };
  const ks = new Keystore({ store, kdf: FAST_KDF, now: () => clock.t, ...opts });
  return { store, ks, clock };
}

/** Asserts that `p` rejects with a KeystoreError of `code` and exactly `message` (when given). */
export async function rejects(p: Promise<unknown>, code: KeystoreErrorCode, message?: string | RegExp): Promise<KeystoreError> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, KeystoreError, `expected a KeystoreError, got ${String(e)}`);
    const err = e as KeystoreError;
    assert.is(err.code, code, `code of: ${err.message}`);
    if (typeof message === 'string') assert.is(err.message, message);
    else if (message) assert.match(err.message, message);
    return err;
  }
  assert.unreachable(`expected a rejection with ${code}`);
  throw new Error('unreachable');
}

/** Every [key, value] of a store, as arrays. */
export async function dump(store: MemoryStore): Promise<Array<[Uint8Array, Uint8Array]>> {
  const out: Array<[Uint8Array, Uint8Array]> = [];
  for await (const e of store.iterate()) out.push(e);
  return out;
}

/** True when `needle` occurs in `hay`. */
export function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  return Buffer.from(hay).indexOf(Buffer.from(needle)) !== -1;
}

/** Offset of the entry count in an export blob: version, N, r, p, salt, verifier. */
export const COUNT_AT = 1 + 12 + 16 + 32;

/** The blob with its entries edited and its original mac kept: what someone without the password can make. */
export async function reencode(blob: Uint8Array, edit: (entries: ExportEntry[]) => ExportEntry[]): Promise<Uint8Array> {
  const { record, entries, mac } = decodeExport(blob);
  return encodeExport({ record, entries: edit(entries) }, () => mac);
}

/** The blob with its entries edited and a valid mac: what the password's owner can make. */
export async function forge(blob: Uint8Array, password: string, edit: (entries: ExportEntry[]) => ExportEntry[]): Promise<Uint8Array> {
  const { record, entries } = decodeExport(blob);
  const { dataKey } = await deriveKeys(password, record.salt, record.kdf);
  return encodeExport({ record, entries: edit(entries) }, (body) => exportMac(dataKey, body));
}
