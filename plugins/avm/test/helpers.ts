// Shared test values: the chain the reference vectors are for, deterministic IDs, and one valid tx of
// every kind (sorted as the syntactic rules require), plus assertion helpers.
import * as assert from 'uvu/assert';
import { Id, PrivateKey, ShortId, hasErrorCode, jsonReplacer, sha256, utf8Encode } from '@cornice/sdk';
import {
  sortAddresses,
  sortOutputs,
  sortTransferableInputs,
  sortTransferableOutputs,
  type AvmErrorCode,
  type MintOutput,
  type SyntaxContext,
  type TransferableInput,
  type TransferableOutput,
  type TransferOutput,
  type Tx,
} from '../src/index.js';

export const NETWORK_ID = 12345;
/** The local X-Chain's ID (the reference vectors' BCID). */
export const X_CHAIN_ID = Id.fromString('4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
export const CTX: SyntaxContext = { networkId: NETWORK_ID, chainId: X_CHAIN_ID };
export const EWOQ_KEY = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
export const ewoq = (): PrivateKey => PrivateKey.fromString(EWOQ_KEY);

/** Deterministic 32/20/65-byte values, distinct per label. */
export const id = (label: string): Id => Id.fromBytes(sha256(utf8Encode(label)));
export const addr = (label: string): ShortId => ShortId.fromBytes(sha256(utf8Encode(label)).subarray(0, 20));
export const sig = (n: number): Uint8Array => new Uint8Array(65).map((_, i) => (i * 7 + n) & 0xff);

export const ASSET_A = id('asset A');
export const ASSET_B = id('asset B');

export function transfer(amount: bigint, owners: ShortId[], threshold = 1, locktime = 0n): TransferOutput {
  return { kind: 'transfer', amount, locktime, threshold, addresses: sortAddresses(owners) };
}

export function mint(owners: ShortId[], threshold = 1): MintOutput {
  return { kind: 'mint', threshold, addresses: sortAddresses(owners) };
}

export const out = (assetId: Id, amount: bigint, owners: ShortId[], threshold = 1): TransferableOutput => ({
  assetId,
  out: transfer(amount, owners, threshold),
});

export const input = (txLabel: string, outputIndex: number, assetId: Id, amount: bigint, sigIndices: number[] = [0]): TransferableInput => ({
  txId: id(txLabel),
  outputIndex,
  assetId,
  input: { amount, sigIndices },
});

const chain = { networkId: NETWORK_ID, chainId: X_CHAIN_ID };

/** One syntactically valid tx of every kind, for the chain CTX. */
export function sampleTxs(): Record<Tx['unsigned']['kind'], Tx> {
  return {
    base: {
      unsigned: {
        kind: 'base',
        ...chain,
        outs: sortTransferableOutputs([out(ASSET_A, 5n, [addr('a1')]), out(ASSET_B, 3n, [addr('a1'), addr('a2')], 2)]),
        ins: sortTransferableInputs([input('t1', 0, ASSET_A, 10n), input('t2', 1, ASSET_B, 3n, [0, 1])]),
      },
      creds: [{ sigs: [sig(1)] }, { sigs: [sig(2), sig(3)] }],
    },
    createAsset: {
      unsigned: {
        kind: 'createAsset',
        ...chain,
        outs: [],
        ins: [],
        name: 'Test Coin',
        symbol: 'TST',
        denomination: 2,
        states: [{ fxIndex: 0, outs: sortOutputs([transfer(100n, [addr('a2')]), mint([addr('a1')])]) }],
      },
      creds: [],
    },
    operation: {
      unsigned: {
        kind: 'operation',
        ...chain,
        outs: [],
        ins: [input('t3', 0, ASSET_A, 1n)],
        ops: [
          {
            assetId: ASSET_B,
            utxos: [{ txId: id('t4'), outputIndex: 2 }],
            op: { kind: 'mint', sigIndices: [0], mintOutput: mint([addr('a1')]), transferOutput: transfer(50n, [addr('a2')]) },
          },
        ],
      },
      creds: [{ sigs: [sig(4)] }, { sigs: [sig(5)] }],
    },
    import: {
      unsigned: { kind: 'import', ...chain, outs: [out(ASSET_A, 90n, [addr('a1')])], ins: [], importedIns: [input('t5', 0, ASSET_A, 100n)] },
      creds: [{ sigs: [sig(6)] }],
    },
    export: {
      unsigned: {
        kind: 'export',
        ...chain,
        outs: [out(ASSET_A, 10n, [addr('a1')])],
        ins: [input('t6', 0, ASSET_A, 100n)],
        exportedOuts: [out(ASSET_A, 90n, [addr('a2')])],
      },
      creds: [{ sigs: [sig(7)] }],
    },
  };
}

/** IDs, bytes and bigints as comparable plain JSON (uvu's deep equality cannot see an Id's bytes). */
export const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, jsonReplacer));

/** Asserts that `fn` throws an AvmError of `code`, whose message is `message` (or matches it). */
export function throwsAvm(fn: () => unknown, code: AvmErrorCode, message?: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.ok(hasErrorCode(e, code), `expected AvmError ${code} but got ${String(e)}`);
    if (typeof message === 'string') assert.is((e as Error).message, message);
    else if (message) assert.match((e as Error).message, message);
    return;
  }
  assert.unreachable(`expected AvmError ${code}${message ? ` (${String(message)})` : ''}`);
}
