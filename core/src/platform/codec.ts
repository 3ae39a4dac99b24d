/**
 * The platform chain's byte formats, the reference node's byte for byte: transactions, blocks, UTXOs.
 *
 * - Wire form of a tx (`encodeTx`): u32 SIGNED type ID + unsigned fields + signature fields.
 * - What keys sign (`unsignedTxBytes`): u32 UNSIGNED type ID + unsigned fields; the signature is over
 *   SHA-256 of those bytes.
 * - Tx ID (`txId`): SHA-256 of the unsigned and signature fields WITHOUT a type ID.
 * - Block bytes: u32 block type ID + fields (a tx inside as an interface: signed type ID + fields);
 *   block ID = SHA-256(block bytes).
 * - The secp256k1fx values, transferable outputs and inputs and UTXOs are the sdk's shared
 *   components (`@cornice/sdk/components`), the asset VM's own: read here with this codec's
 *   type-ID check (`readFxTypeId`).
 *
 * Decoding is bounded (256 KiB per value, counts checked against the input before allocating) and
 * rejects trailing bytes; every failure is PlatformError('Malformed') with the codec's text.
 */
import { CodecError, Id, sha256, type Reader, type Writer } from '@cornice/sdk';
import { readAll, withCodecErrors, writeAll } from './bounded.js';
import { PlatformError } from './errors.js';
import {
  AVAX_MIN_SIZE,
  SECP256K1FX_MIN_SIZE,
  SECP256K1FX_TYPE_ID,
  SIGNATURE_LENGTH,
  readCredential,
  readSignature,
  readSignatures,
  readTransferableInput,
  readTransferableOutput,
  readUtxo,
  utxoIdOf,
  writeCredential,
  writeSignature,
  writeSignatures,
  writeTransferableInput,
  writeTransferableOutput,
  writeUtxo,
  type TransferOutput,
  type TypeIdReader,
  type TypeIdSlot,
  type Utxo,
} from '@cornice/sdk/components';
import type {
  AddDefaultSubnetDelegatorTx,
  AddDefaultSubnetValidatorTx,
  AddNonDefaultSubnetValidatorTx,
  CreateChainTx,
  CreateSubnetTx,
  ExportTx,
  ImportTx,
  IssuableTx,
  PlatformBlockFields,
  PlatformTx,
} from './model.js';

/** A UTXO in shared memory as this chain reads it: of a TransferOutput. */
export type PlatformUtxo = Utxo<TransferOutput>;

/** UTXO ID (the reference's InputID) = SHA-256(u64 BE outputIndex ‖ txID). */
export function utxoId(txId: Id, outputIndex: number): Id {
  return utxoIdOf(txId, outputIndex);
}

/** What this codec's errors call the value in each slot of a shared component, and the type IDs it takes there. */
const FX_SLOTS: Readonly<Record<TypeIdSlot, { what: string; allowed?: readonly number[] }>> = {
  tx: { what: 'a tx' },
  txOutput: { what: 'an output' },
  txInput: { what: 'an input' },
  /** A UTXO this chain reads holds a TransferOutput (the AVM's may hold a MintOutput). */
  utxoOutput: { what: 'an output', allowed: [SECP256K1FX_TYPE_ID.transferOutput] },
  initialStateOutput: { what: 'an initial state output' },
  operation: { what: 'an operation' },
  credential: { what: 'a credential' },
};

/** The u32 type ID of a shared component's interface value: CodecError `<what> has type ID N; expected M` for another. */
export const readFxTypeId: TypeIdReader = (r, allowed, slot) => {
  const at = r.offset;
  const typeId = r.u32();
  const { what, allowed: narrowed } = FX_SLOTS[slot];
  const expected = narrowed ?? allowed;
  if (!expected.includes(typeId)) {
    throw new CodecError('Invalid', `${what} has type ID ${typeId}; expected ${expected.join(' or ')}`, { offset: at });
  }
  return typeId;
};

/** Block type IDs. */
export const BLOCK_TYPE_ID = { proposal: 0, abort: 1, commit: 2, standard: 3, atomic: 4 } as const;

type TxKind = PlatformTx['kind'];
type TxOf<K extends TxKind> = Extract<PlatformTx, { kind: K }>;

/** How one tx kind is laid out. `unsignedTypeId` only for txs users sign. */
interface TxFormat<T extends PlatformTx> {
  readonly name: string;
  readonly typeId: number;
  readonly unsignedTypeId?: number;
  writeUnsigned(w: Writer, tx: T): void;
  writeSigs(w: Writer, tx: T): void;
  read(r: Reader): T;
}

/** A time field: u64 on the wire, a safe integer of seconds here; PlatformError('Malformed') beyond. */
export function readTime(r: Reader, what: string): number {
  const at = r.offset;
  const v = r.u64();
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new PlatformError('Malformed', `${what} ${v} is out of range`, { offset: at });
  }
  return Number(v);
}

/** DurationValidator{Validator{NodeID [20], Wght u64}, Start u64, End u64}. */
function writeDurationValidator(w: Writer, tx: AddDefaultSubnetValidatorTx | AddDefaultSubnetDelegatorTx | AddNonDefaultSubnetValidatorTx): void {
  w.shortId(tx.nodeId).u64(tx.weight).u64(tx.start).u64(tx.end);
}

function readDurationValidator(r: Reader) {
  const nodeId = r.shortId();
  const weight = r.u64();
  const start = readTime(r, 'start time');
  const end = readTime(r, 'end time');
  return { nodeId, weight, start, end };
}

const noSigs = (): void => {};

const TX_FORMATS: { readonly [K in TxKind]: TxFormat<TxOf<K>> } = {
  addDefaultSubnetValidator: {
    name: 'addDefaultSubnetValidatorTx',
    unsignedTypeId: 10,
    typeId: 11,
    writeUnsigned(w, tx) {
      writeDurationValidator(w, tx);
      w.u32(tx.networkId).u64(tx.nonce).shortId(tx.destination).u32(tx.shares);
    },
    writeSigs: (w, tx) => writeSignature(w, tx.sig),
    read: (r) => ({
      kind: 'addDefaultSubnetValidator',
      ...readDurationValidator(r),
      networkId: r.u32(),
      nonce: r.u64(),
      destination: r.shortId(),
      shares: r.u32(),
      sig: readSignature(r),
    }),
  },
  addNonDefaultSubnetValidator: {
    name: 'addNonDefaultSubnetValidatorTx',
    unsignedTypeId: 12,
    typeId: 13,
    writeUnsigned(w, tx) {
      writeDurationValidator(w, tx);
      w.id(tx.subnetId).u32(tx.networkId).u64(tx.nonce);
    },
    writeSigs(w, tx) {
      writeSignatures(w, tx.controlSigs);
      writeSignature(w, tx.payerSig);
    },
    read: (r) => ({
      kind: 'addNonDefaultSubnetValidator',
      ...readDurationValidator(r),
      subnetId: r.id(),
      networkId: r.u32(),
      nonce: r.u64(),
      controlSigs: readSignatures(r),
      payerSig: readSignature(r),
    }),
  },
  addDefaultSubnetDelegator: {
    name: 'addDefaultSubnetDelegatorTx',
    unsignedTypeId: 14,
    typeId: 15,
    writeUnsigned(w, tx) {
      writeDurationValidator(w, tx);
      w.u32(tx.networkId).u64(tx.nonce).shortId(tx.destination);
    },
    writeSigs: (w, tx) => writeSignature(w, tx.sig),
    read: (r) => ({
      kind: 'addDefaultSubnetDelegator',
      ...readDurationValidator(r),
      networkId: r.u32(),
      nonce: r.u64(),
      destination: r.shortId(),
      sig: readSignature(r),
    }),
  },
  createChain: {
    name: 'CreateChainTx',
    unsignedTypeId: 16,
    typeId: 17,
    writeUnsigned(w, tx) {
      w.u32(tx.networkId).id(tx.subnetId).u64(tx.nonce).str(tx.chainName).id(tx.vmId);
      w.array(tx.fxIds, (w2, fx) => w2.id(fx)).bytes(tx.genesisData);
    },
    writeSigs(w, tx) {
      writeSignatures(w, tx.controlSigs);
      writeSignature(w, tx.payerSig);
    },
    read: (r) => ({
      kind: 'createChain',
      networkId: r.u32(),
      subnetId: r.id(),
      nonce: r.u64(),
      chainName: r.str(),
      vmId: r.id(),
      fxIds: r.array((r2) => r2.id(), { minItemSize: 32 }),
      genesisData: r.bytes(),
      controlSigs: readSignatures(r),
      payerSig: readSignature(r),
    }),
  },
  createSubnet: {
    name: 'CreateSubnetTx',
    unsignedTypeId: 18,
    typeId: 19,
    writeUnsigned(w, tx) {
      w.u32(tx.networkId).u64(tx.nonce).array(tx.controlKeys, (w2, k) => w2.shortId(k)).u16(tx.threshold);
    },
    writeSigs: (w, tx) => writeSignature(w, tx.sig),
    read: (r) => ({
      kind: 'createSubnet',
      networkId: r.u32(),
      nonce: r.u64(),
      controlKeys: r.array((r2) => r2.shortId(), { minItemSize: 20 }),
      threshold: r.u16(),
      sig: readSignature(r),
    }),
  },
  import: {
    name: 'ImportTx',
    unsignedTypeId: 20,
    typeId: 21,
    writeUnsigned(w, tx) {
      w.u32(tx.networkId).u64(tx.nonce).shortId(tx.account).array(tx.ins, writeTransferableInput);
    },
    writeSigs(w, tx) {
      writeSignature(w, tx.sig);
      w.array(tx.creds, writeCredential);
    },
    read: (r) => ({
      kind: 'import',
      networkId: r.u32(),
      nonce: r.u64(),
      account: r.shortId(),
      ins: r.array((r2) => readTransferableInput(r2, readFxTypeId), { minItemSize: AVAX_MIN_SIZE.transferableInput }),
      sig: readSignature(r),
      creds: r.array((r2) => readCredential(r2, readFxTypeId), { minItemSize: SECP256K1FX_MIN_SIZE.credential }),
    }),
  },
  export: {
    name: 'ExportTx',
    unsignedTypeId: 22,
    typeId: 23,
    writeUnsigned(w, tx) {
      w.u32(tx.networkId).u64(tx.nonce).array(tx.outs, writeTransferableOutput);
    },
    writeSigs: (w, tx) => writeSignature(w, tx.sig),
    read: (r) => ({
      kind: 'export',
      networkId: r.u32(),
      nonce: r.u64(),
      outs: r.array((r2) => readTransferableOutput(r2, readFxTypeId), { minItemSize: AVAX_MIN_SIZE.transferableOutput }),
      sig: readSignature(r),
    }),
  },
  advanceTime: {
    name: 'advanceTimeTx',
    typeId: 24,
    writeUnsigned: (w, tx) => void w.u64(tx.time),
    writeSigs: noSigs,
    read: (r) => ({ kind: 'advanceTime', time: readTime(r, 'time') }),
  },
  rewardValidator: {
    name: 'rewardValidatorTx',
    typeId: 25,
    writeUnsigned: (w, tx) => void w.id(tx.txId),
    writeSigs: noSigs,
    read: (r) => ({ kind: 'rewardValidator', txId: r.id() }),
  },
};

/** Tx type IDs by kind: `typeId` (signed, the wire form) and `unsignedTypeId` (what keys sign). */
export const TX_TYPE_ID: { readonly [K in TxKind]: { typeId: number; unsignedTypeId?: number } } = Object.fromEntries(
  Object.entries(TX_FORMATS).map(([k, f]) => [k, { typeId: f.typeId, unsignedTypeId: f.unsignedTypeId }]),
) as { [K in TxKind]: { typeId: number; unsignedTypeId?: number } };

const FORMAT_BY_TYPE_ID = new Map<number, TxFormat<PlatformTx>>(
  Object.values(TX_FORMATS).map((f) => [f.typeId, f as TxFormat<PlatformTx>]),
);

/** Names of every other type ID, for errors that say what a misplaced value is. */
const OTHER_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'ProposalBlock',
  1: 'Abort',
  2: 'Commit',
  3: 'StandardBlock',
  4: 'AtomicBlock',
  5: 'secp256k1fx.TransferInput',
  6: 'secp256k1fx.MintOutput',
  7: 'secp256k1fx.TransferOutput',
  8: 'secp256k1fx.MintOperation',
  9: 'secp256k1fx.Credential',
  ...Object.fromEntries(Object.values(TX_FORMATS).flatMap((f) => (f.unsignedTypeId === undefined ? [] : [[f.unsignedTypeId, `Unsigned${f.name[0]!.toUpperCase()}${f.name.slice(1)}`]]))),
};

function typeName(typeId: number): string {
  return FORMAT_BY_TYPE_ID.get(typeId)?.name ?? OTHER_TYPE_NAMES[typeId] ?? 'unknown';
}

/** Where a tx appears, and the kinds allowed there. */
const PLACES = {
  tx: { what: 'a signed tx', kinds: Object.keys(TX_FORMATS) as TxKind[] },
  proposal: {
    what: 'a proposal block',
    kinds: ['addDefaultSubnetValidator', 'addNonDefaultSubnetValidator', 'addDefaultSubnetDelegator', 'advanceTime', 'rewardValidator'],
  },
  standard: { what: 'a standard block', kinds: ['createChain', 'createSubnet'] },
  atomic: { what: 'an atomic block', kinds: ['import', 'export'] },
  genesisValidator: { what: 'a genesis validator', kinds: ['addDefaultSubnetValidator'] },
} as const satisfies Record<string, { what: string; kinds: readonly TxKind[] }>;

export type TxPlace = keyof typeof PLACES;

/** Runs an encode or decode step, turning the codec's errors into PlatformError('Malformed') with the same text. */
export function malformed<T>(step: () => T): T {
  return withCodecErrors(step, (message, data) => new PlatformError('Malformed', message, data));
}

function formatOf(tx: PlatformTx): TxFormat<PlatformTx> {
  const f = (TX_FORMATS as Record<string, TxFormat<PlatformTx> | undefined>)[tx?.kind];
  if (f === undefined) throw new PlatformError('Malformed', `unknown tx kind ${String(tx?.kind)}`);
  return f;
}

/** A tx as an interface value (u32 signed type ID + signed fields), checked to belong in `place`. */
export function writeTx(w: Writer, tx: PlatformTx, place: TxPlace = 'tx'): void {
  const f = formatOf(tx);
  const allowed: readonly TxKind[] = PLACES[place].kinds;
  if (!allowed.includes(tx.kind)) {
    throw new PlatformError('Malformed', `${f.name} cannot appear in ${PLACES[place].what}`);
  }
  w.u32(f.typeId);
  f.writeUnsigned(w, tx);
  f.writeSigs(w, tx);
}

/** Reads a tx interface value; PlatformError('Malformed') when its type cannot appear in `place`. */
export function readTx(r: Reader, place: TxPlace = 'tx'): PlatformTx {
  const at = r.offset;
  const typeId = r.u32();
  const f = FORMAT_BY_TYPE_ID.get(typeId);
  const allowed: readonly TxKind[] = PLACES[place].kinds;
  if (f === undefined || !allowed.some((k) => TX_FORMATS[k].typeId === typeId)) {
    const known = typeName(typeId);
    throw new PlatformError(
      'Malformed',
      known === 'unknown' ? `unknown type ID ${typeId}` : `type ID ${typeId} (${known}) cannot appear in ${PLACES[place].what}`,
      { offset: at },
    );
  }
  return f.read(r);
}

/** Reads a whole value with `read` (bounded, no trailing bytes); PlatformError('Malformed') otherwise. */
export function decodeAll<T>(bytes: Uint8Array, read: (r: Reader) => T): T {
  return malformed(() => readAll(bytes, read));
}

/** Writes a whole value (256 KiB at most) with `write`; PlatformError('Malformed') otherwise. */
export function encodeAll(write: (w: Writer) => void): Uint8Array {
  return malformed(() => writeAll(write));
}

/** The wire form of a tx: u32 signed type ID + signed fields (the reference's genericTx). */
export function encodeTx(tx: PlatformTx): Uint8Array {
  return encodeAll((w) => writeTx(w, tx));
}

/** A tx from its wire form; PlatformError('Malformed', <codec text>) otherwise. */
export function decodeTx(bytes: Uint8Array): PlatformTx {
  return decodeAll(bytes, (r) => readTx(r));
}

/** What keys sign (through SHA-256): u32 unsigned type ID + unsigned fields. */
export function unsignedTxBytes(tx: IssuableTx): Uint8Array {
  const f = formatOf(tx);
  if (f.unsignedTypeId === undefined) throw new PlatformError('Malformed', `${f.name} is not signed`);
  const unsignedTypeId = f.unsignedTypeId;
  return encodeAll((w) => {
    w.u32(unsignedTypeId);
    f.writeUnsigned(w, tx);
  });
}

/** The signed fields of a tx with no type ID: what its ID hashes, and what a genesis holds of a chain. */
export function writeSignedFields(w: Writer, tx: PlatformTx): void {
  const f = formatOf(tx);
  f.writeUnsigned(w, tx);
  f.writeSigs(w, tx);
}

/** Reads the signed fields of a tx of `kind` (no type ID). */
export function readSignedFields<K extends TxKind>(r: Reader, kind: K): TxOf<K> {
  return (TX_FORMATS[kind] as TxFormat<TxOf<K>>).read(r);
}

/** SHA-256 of the signed fields, without a type ID. */
export function txId(tx: PlatformTx): Id {
  return Id.fromBytes(sha256(encodeAll((w) => writeSignedFields(w, tx))));
}

/** Block bytes: u32 block type ID, ParentID, then the block's tx(s) as interface values. */
export function encodeBlock(b: PlatformBlockFields): Uint8Array {
  return encodeAll((w) => {
    const typeId = BLOCK_TYPE_ID[b.kind];
    if (typeId === undefined) throw new PlatformError('Malformed', `unknown block kind ${String(b.kind)}`);
    w.u32(typeId).id(b.parentId);
    switch (b.kind) {
      case 'proposal':
      case 'atomic':
        writeTx(w, b.tx, b.kind);
        break;
      case 'standard':
        w.array(b.txs, (w2, tx) => writeTx(w2, tx, 'standard'));
        break;
      case 'commit':
      case 'abort':
        break;
    }
  });
}

/** A block from its bytes; PlatformError('Malformed') otherwise (a tx of the wrong kind for the block included). */
export function decodeBlock(bytes: Uint8Array): PlatformBlockFields {
  return decodeAll(bytes, (r) => {
    const at = r.offset;
    const typeId = r.u32();
    const parentId = r.id();
    switch (typeId) {
      case BLOCK_TYPE_ID.proposal:
        return { kind: 'proposal', parentId, tx: readTx(r, 'proposal') as Extract<PlatformBlockFields, { kind: 'proposal' }>['tx'] };
      case BLOCK_TYPE_ID.abort:
        return { kind: 'abort', parentId };
      case BLOCK_TYPE_ID.commit:
        return { kind: 'commit', parentId };
      case BLOCK_TYPE_ID.standard:
        return {
          kind: 'standard',
          parentId,
          // Every decision tx holds at least its type ID and one signature.
          txs: r.array((r2) => readTx(r2, 'standard') as CreateChainTx | CreateSubnetTx, { minItemSize: 4 + SIGNATURE_LENGTH }),
        };
      case BLOCK_TYPE_ID.atomic:
        return { kind: 'atomic', parentId, tx: readTx(r, 'atomic') as ImportTx | ExportTx };
      default: {
        const known = typeName(typeId);
        throw new PlatformError('Malformed', known === 'unknown' ? `unknown block type ID ${typeId}` : `type ID ${typeId} (${known}) is not a block`, {
          offset: at,
        });
      }
    }
  });
}

/** Block ID = SHA-256(block bytes). */
export function blockIdOf(bytes: Uint8Array): Id {
  return Id.fromBytes(sha256(bytes));
}

/** The bytes of a UTXO (the sdk's shared component) as shared memory holds them. */
export function encodeUtxo(u: PlatformUtxo): Uint8Array {
  return encodeAll((w) => writeUtxo(w, u));
}

/** A UTXO from its bytes; PlatformError('Malformed') otherwise (an output other than a TransferOutput included). */
export function decodeUtxo(bytes: Uint8Array): PlatformUtxo {
  return decodeAll(bytes, (r) => readUtxo(r, readFxTypeId) as PlatformUtxo);
}
