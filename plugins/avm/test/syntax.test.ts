// checkSyntax: every syntactic rule, one broken at a time, with the reference's texts.
import { test } from 'uvu';
import { Id } from '@cornice/sdk';
import {
  checkSyntax,
  sortOperations,
  sortTransferableInputs,
  sortTransferableOutputs,
  type BaseTxFields,
  type CreateAssetTx,
  type ExportTx,
  type ImportTx,
  type OperationTx,
  type Tx,
} from '../src/index.js';
import { ASSET_A, ASSET_B, CTX, addr, id, input, mint, out, sampleTxs, sig, throwsAvm, transfer } from './helpers.js';

const invalid = (tx: Tx, message: string) => throwsAvm(() => checkSyntax(tx, CTX), 'InvalidTx', message);

/** The sample of `kind` with its unsigned tx changed by `change`. */
function withUnsigned<K extends Tx['unsigned']['kind']>(kind: K, change: (u: Extract<Tx['unsigned'], { kind: K }>) => void, creds?: Tx['creds']): Tx {
  const tx = sampleTxs()[kind];
  change(tx.unsigned as Extract<Tx['unsigned'], { kind: K }>);
  return creds ? { ...tx, creds } : tx;
}
const base = (change: (u: BaseTxFields) => void, creds?: Tx['creds']) => withUnsigned('base', change, creds);

test('every sample passes', () => {
  for (const tx of Object.values(sampleTxs())) checkSyntax(tx, CTX);
});

test('NetID and BCID must be the chain\'s', () => {
  for (const kind of ['base', 'createAsset', 'operation', 'import', 'export'] as const) {
    invalid(withUnsigned(kind, (u) => void (u.networkId = 1)), 'tx has wrong network ID');
    invalid(withUnsigned(kind, (u) => void (u.chainId = id('other chain'))), 'tx has wrong chain ID');
  }
});

test('outputs: sorted by asset then bytes; amounts > 0; no empty asset ID', () => {
  invalid(base((u) => u.outs.reverse()), 'outputs not sorted');
  invalid(base((u) => void (u.outs = [out(ASSET_A, 2n, [addr('a1')]), out(ASSET_A, 1n, [addr('a1')])])), 'outputs not sorted');
  // Equal outputs are sorted (not unique): allowed.
  checkSyntax(base((u) => void (u.outs = [out(ASSET_A, 2n, [addr('a1')]), out(ASSET_A, 2n, [addr('a1')])])), CTX);
  invalid(base((u) => void (u.outs = [out(ASSET_A, 0n, [addr('a1')])])), 'output has no value');
  invalid(base((u) => void (u.outs = [out(Id.empty, 1n, [addr('a1')])])), 'empty asset ID is not valid');
});

test('owners: threshold <= len(addrs); threshold 0 => no addresses; addresses sorted and unique', () => {
  const owned = (threshold: number, addresses: ReturnType<typeof addr>[]) =>
    base((u) => void (u.outs = [{ assetId: ASSET_A, out: { kind: 'transfer', amount: 1n, locktime: 0n, threshold, addresses } }]));
  invalid(owned(2, [addr('a1')]), 'output is unspendable');
  invalid(owned(0, [addr('a1')]), 'output representation should be optimized');
  checkSyntax(owned(0, []), CTX); // an output anyone can spend
  const [x, y] = [addr('a1'), addr('a2')].sort((a, b) => a.compare(b));
  invalid(owned(1, [y!, x!]), 'addresses not sorted and unique');
  invalid(owned(1, [x!, x!]), 'addresses not sorted and unique');
  checkSyntax(owned(2, [x!, y!]), CTX);
});

test('inputs: sorted and unique by (txID, index); amounts > 0; sig indices sorted and unique', () => {
  invalid(base((u) => u.ins.reverse()), 'inputs not sorted and unique');
  const dup = input('t1', 0, ASSET_A, 10n);
  invalid(base((u) => void (u.ins = [dup, dup]), [{ sigs: [sig(1)] }, { sigs: [sig(1)] }]), 'inputs not sorted and unique');
  invalid(base((u) => void (u.ins = [input('t1', 1, ASSET_A, 10n), input('t1', 0, ASSET_A, 10n)]), [{ sigs: [sig(1)] }, { sigs: [sig(1)] }]), 'inputs not sorted and unique');
  invalid(base((u) => void (u.ins[0]!.input.amount = 0n)), 'input has no value');
  invalid(base((u) => void (u.ins[1]!.input.sigIndices = [1, 0])), 'signatures not sorted and unique');
  invalid(base((u) => void (u.ins[1]!.input.sigIndices = [1, 1])), 'signatures not sorted and unique');
  invalid(base((u) => void (u.ins[0]!.assetId = Id.empty)), 'empty asset ID is not valid');
});

test('flow: produced <= consumed per asset (the rest is burned); u64 overflow of a sum', () => {
  const outOfA = (u: BaseTxFields) => u.outs.find((o) => o.assetId.equals(ASSET_A))!.out as { amount: bigint };
  invalid(base((u) => void (outOfA(u).amount = 11n)), 'insufficient funds'); // 10 of A consumed
  checkSyntax(base((u) => void (outOfA(u).amount = 10n)), CTX);
  // An asset produced but never consumed.
  invalid(base((u) => void (u.outs = sortTransferableOutputs([...u.outs, out(id('asset C'), 1n, [addr('a1')])]))), 'insufficient funds');
  const max = (1n << 64n) - 1n;
  const big = [input('t1', 0, ASSET_A, max), input('t1', 1, ASSET_A, 1n)];
  invalid(base((u) => void (u.ins = sortTransferableInputs(big)), [{ sigs: [sig(1)] }, { sigs: [sig(1)] }]), 'inputs overflowed uint64');
  invalid(base((u) => void (u.outs = [out(ASSET_A, max, [addr('a1')]), out(ASSET_A, max, [addr('a1')])])), 'outputs overflowed uint64');
});

test('credentials: one per input (+ ops / imported ins); as many signatures as sig indices', () => {
  const s = sampleTxs();
  invalid({ ...s.base, creds: s.base.creds.slice(1) }, 'should have the same number of credentials as inputs');
  invalid({ ...s.base, creds: [...s.base.creds, { sigs: [] }] }, 'should have the same number of credentials as inputs');
  invalid({ ...s.operation, creds: s.operation.creds.slice(1) }, 'should have the same number of credentials as inputs');
  invalid({ ...s.import, creds: [] }, 'should have the same number of credentials as inputs');
  invalid({ ...s.createAsset, creds: [{ sigs: [] }] }, 'should have the same number of credentials as inputs');
  const mismatch = 'input expected a different number of signers than provided in the credential';
  invalid({ ...s.base, creds: [{ sigs: [sig(1)] }, { sigs: [sig(2)] }] }, mismatch);
  invalid({ ...s.operation, creds: [{ sigs: [sig(1)] }, { sigs: [] }] }, mismatch);
  invalid({ ...s.import, creds: [{ sigs: [sig(1), sig(2)] }] }, mismatch);
});

test('CreateAssetTx: name <= 128 bytes, symbol <= 4, denomination <= 32, printable ASCII without outer whitespace, at least one initial state', () => {
  const ca = (change: (u: CreateAssetTx) => void) => withUnsigned('createAsset', change);
  checkSyntax(ca((u) => void ((u.name = 'n'.repeat(128)), (u.symbol = 'ABCD'), (u.denomination = 32))), CTX);
  checkSyntax(ca((u) => void ((u.name = ''), (u.symbol = ''))), CTX); // both may be empty
  invalid(ca((u) => void (u.name = 'n'.repeat(129))), 'name is too long, maximum size is 128');
  invalid(ca((u) => void (u.name = 'é'.repeat(65))), 'name is too long, maximum size is 128'); // bytes, not characters
  invalid(ca((u) => void (u.symbol = 'ABCDE')), 'symbol is too long, maximum size is 4');
  invalid(ca((u) => void (u.states = [])), 'assets must support at least one Fx');
  invalid(ca((u) => void (u.denomination = 33)), 'denomination is too large');
  invalid(ca((u) => void (u.name = ' Coin')), 'unexpected whitespace provided');
  invalid(ca((u) => void (u.symbol = 'TS ')), 'unexpected whitespace provided');
  invalid(ca((u) => void (u.name = 'Co\tin')), 'unprintable ascii character was provided');
  invalid(ca((u) => void (u.symbol = 'TŠT')), 'unprintable ascii character was provided');
  // The reference's order: lengths and states before the characters.
  invalid(ca((u) => void ((u.name = ' x'), (u.states = []))), 'assets must support at least one Fx');
});

test('CreateAssetTx initial states: outputs valid and sorted; states sorted and unique by fx; only secp256k1fx', () => {
  const ca = (change: (u: CreateAssetTx) => void) => withUnsigned('createAsset', change);
  invalid(ca((u) => u.states[0]!.outs.reverse()), 'outputs not sorted');
  invalid(ca((u) => void (u.states[0]!.outs = [transfer(0n, [addr('a')])])), 'output has no value');
  invalid(ca((u) => void (u.states[0]!.outs = [mint([addr('a')], 2)])), 'output is unspendable');
  invalid(ca((u) => void (u.states = [u.states[0]!, u.states[0]!])), 'initial states not sorted and unique');
  invalid(ca((u) => void (u.states[0]!.fxIndex = 3)), 'unknown feature extension');
  throwsAvm(() => checkSyntax(ca((u) => void (u.states[0]!.fxIndex = 1)), CTX), 'UnsupportedFx', /^nftfx is not supported/);
  // Initial states are not part of the flow check: creating supply needs no inputs.
  checkSyntax(ca((u) => void (u.states[0]!.outs = [transfer((1n << 64n) - 1n, [addr('a')])])), CTX);
});

test('OperationTx: at least one op; UTXO refs sorted and unique; no double spend across ins and ops; ops sorted and unique; mint outputs valid', () => {
  const op = (change: (u: OperationTx) => void, creds?: Tx['creds']) => withUnsigned('operation', change, creds);
  invalid(op((u) => void (u.ops = []), [{ sigs: [sig(1)] }]), 'an operationTx must have at least one operation');
  const refs = [{ txId: id('t4'), outputIndex: 2 }, { txId: id('t4'), outputIndex: 1 }];
  invalid(op((u) => void (u.ops[0]!.utxos = refs)), 'utxo IDs not sorted and unique');
  invalid(op((u) => void (u.ops[0]!.utxos = [refs[0]!, refs[0]!])), 'utxo IDs not sorted and unique');
  invalid(op((u) => void (u.ops[0]!.utxos = [{ txId: id('t3'), outputIndex: 0 }])), 'inputs attempt to double spend an input');
  invalid(op((u) => void (u.ops[0]!.assetId = Id.empty)), 'empty asset ID is not valid');
  invalid(op((u) => void (u.ops[0]!.op.sigIndices = [2, 1])), 'signatures not sorted and unique');
  invalid(op((u) => void (u.ops[0]!.op.mintOutput.threshold = 0)), 'output representation should be optimized');
  invalid(op((u) => void (u.ops[0]!.op.transferOutput.amount = 0n)), 'output has no value');
  const twin = (u: OperationTx) => ({ ...u.ops[0]!, utxos: [{ txId: id('t7'), outputIndex: 0 }] });
  invalid(op((u) => void (u.ops = sortOperations([u.ops[0]!, twin(u)]).reverse()), [{ sigs: [sig(1)] }, { sigs: [sig(2)] }, { sigs: [sig(3)] }]), 'operations not sorted and unique');
  invalid(op((u) => void (u.ops = [twin(u), twin(u)]), [{ sigs: [sig(1)] }, { sigs: [sig(2)] }, { sigs: [sig(3)] }]), 'inputs attempt to double spend an input');
  checkSyntax(op((u) => void (u.ops = sortOperations([u.ops[0]!, twin(u)])), [{ sigs: [sig(1)] }, { sigs: [sig(2)] }, { sigs: [sig(3)] }]), CTX);
  // Minting is not part of the flow check.
  checkSyntax(op((u) => void (u.ops[0]!.op.transferOutput.amount = (1n << 64n) - 1n)), CTX);
});

test('ImportTx: at least one imported input; imported inputs checked and sorted; they count in the flow', () => {
  const imp = (change: (u: ImportTx) => void, creds?: Tx['creds']) => withUnsigned('import', change, creds);
  invalid(imp((u) => void (u.importedIns = []), []), 'no import inputs');
  const two = sortTransferableInputs([input('t5', 0, ASSET_A, 100n), input('t5', 1, ASSET_A, 5n)]);
  invalid(imp((u) => void (u.importedIns = [...two].reverse()), [{ sigs: [sig(1)] }, { sigs: [sig(1)] }]), 'inputs not sorted and unique');
  invalid(imp((u) => void (u.importedIns[0]!.input.amount = 0n)), 'input has no value');
  invalid(imp((u) => void (u.importedIns[0]!.input.amount = 89n)), 'insufficient funds');
});

test('ExportTx: exported outputs checked and sorted; they count in the flow', () => {
  const exp = (change: (u: ExportTx) => void) => withUnsigned('export', change);
  invalid(exp((u) => void (u.exportedOuts = [out(ASSET_A, 50n, [addr('a2')]), out(ASSET_A, 40n, [addr('a2')])])), 'outputs not sorted');
  invalid(exp((u) => void (u.exportedOuts = [out(ASSET_A, 91n, [addr('a2')])])), 'insufficient funds');
  invalid(exp((u) => void (u.exportedOuts = [out(ASSET_B, 1n, [addr('a2')])])), 'insufficient funds');
  invalid(exp((u) => void (u.exportedOuts = [out(ASSET_A, 0n, [addr('a2')])])), 'output has no value');
  checkSyntax(exp((u) => void (u.exportedOuts = [])), CTX);
});

test.run();
