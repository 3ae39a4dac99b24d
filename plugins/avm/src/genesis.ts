/**
 * TEMPORARY stand-in for acodec's genesis.ts (same names), so the VM builds before it lands:
 * Genesis{Txs []GenesisAsset{Alias string, CreateAssetTx}} (reference §4.4). Replaced at merge.
 */
import { Id, Reader, sha256 } from '@cornice/sdk';
import { decodeWith, encodeTx, encodeWith, readUnsignedTx, writeUnsignedFields } from './codec.js';
import { AvmError } from './errors.js';
import type { CreateAssetTx, GenesisAsset } from './model.js';

export function decodeGenesis(bytes: Uint8Array): GenesisAsset[] {
  return decodeWith(bytes, (r) => {
    const n = r.u32();
    const out: GenesisAsset[] = [];
    let rest = r.fixedBytes(r.remaining);
    for (let i = 0; i < n; i++) {
      const head = new Reader(rest);
      const alias = head.str();
      const aliasLen = head.offset;
      // The CreateAssetTx is a struct here (no type ID): read it as if it had type ID 1.
      const withType = new Uint8Array(4 + rest.length - aliasLen);
      withType[3] = 1;
      withType.set(rest.subarray(aliasLen), 4);
      const inner = new Reader(withType);
      const tx = readUnsignedTx(inner);
      if (tx.kind !== 'createAsset') throw new AvmError('Malformed', 'genesis tx is not a CreateAssetTx');
      out.push({ alias, tx });
      rest = rest.subarray(aliasLen + inner.offset - 4);
    }
    if (rest.length) throw new AvmError('Malformed', `has ${rest.length} leftover bytes after unmarshalling`);
    return out;
  });
}

export function encodeGenesis(assets: readonly GenesisAsset[]): Uint8Array {
  return encodeWith((w) =>
    w.array(assets, (w2, a) => {
      w2.str(a.alias);
      writeUnsignedFields(w2, a.tx);
    }),
  );
}

export function assetIdOf(tx: CreateAssetTx): Id {
  return Id.fromBytes(sha256(encodeTx({ unsigned: tx, creds: [] })));
}
