/**
 * X-Chain transfers for end-to-end tests: ewoq's UTXOs on the local network, signed offline with the
 * asset VM's codec, as a wallet would.
 */
import { Id, PrivateKey, cb58Decode, cb58Encode, type ShortId } from '@cornice/sdk';
import { decodeUtxo, encodeTx, producedUtxos, txIdOf, unsignedBytes, type Tx, type UnsignedTx, type Utxo } from '@cornice/avm';
import type { NodeProcess } from './process.js';

export const EWOQ = PrivateKey.fromString('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN');
export const EWOQ_X = `X-${EWOQ.address}`;
export const X_CHAIN = '4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH';

const transferOut = (assetId: Id, to: ShortId, amount: bigint) => ({ assetId, out: { kind: 'transfer' as const, amount, locktime: 0n, threshold: 1, addresses: [to] } });

/** A BaseTx spending ewoq's `utxos` into `outs`, signed offline: its cb58 bytes, ID and unsigned form. */
export function signedBaseTx(utxos: readonly Utxo[], outs: ReturnType<typeof transferOut>[]): { tx: string; txID: string; unsigned: UnsignedTx } {
  const sorted = [...outs].sort((a, b) => (a.out.amount === b.out.amount ? a.out.addresses[0]!.compare(b.out.addresses[0]!) : a.out.amount < b.out.amount ? -1 : 1));
  const unsigned: UnsignedTx = {
    kind: 'base',
    networkId: 12345,
    chainId: Id.fromString(X_CHAIN),
    outs: sorted,
    ins: utxos
      .map((u) => ({ txId: u.txId, outputIndex: u.outputIndex, assetId: u.assetId, input: { amount: u.out.kind === 'transfer' ? u.out.amount : 0n, sigIndices: [0] } }))
      .sort((a, b) => a.txId.compare(b.txId) || a.outputIndex - b.outputIndex),
  };
  const sig = EWOQ.sign(unsignedBytes(unsigned));
  const bytes = encodeTx({ unsigned, creds: unsigned.ins.map(() => ({ sigs: [sig] })) } as Tx);
  return { tx: cb58Encode(bytes), txID: txIdOf(bytes).toString(), unsigned };
}

/** Ewoq's UTXO `utxo` (a transfer output): `amount` to `to`, the rest back to ewoq. */
export function transfer(utxo: Utxo, to: ShortId, amount: bigint): { tx: string; txID: string } {
  if (utxo.out.kind !== 'transfer') throw new Error('not a transfer output');
  return signedBaseTx([utxo], [transferOut(utxo.assetId, to, amount), transferOut(utxo.assetId, EWOQ.address, utxo.out.amount - amount)]);
}

async function ok(n: NodeProcess, method: string, params: unknown): Promise<Record<string, unknown>> {
  const r = await n.call('bc/X', method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result as Record<string, unknown>;
}

/** Ewoq's biggest X-Chain UTXO at `n`. */
export async function ewoqUtxo(n: NodeProcess): Promise<Utxo> {
  const { utxos } = await ok(n, 'avm.getUTXOs', { addresses: [EWOQ_X] });
  const amount = (u: Utxo) => (u.out.kind === 'transfer' ? u.out.amount : 0n);
  return (utxos as string[]).map((u) => decodeUtxo(cb58Decode(u))).sort((a, b) => (amount(a) < amount(b) ? 1 : -1))[0]!;
}

export const txStatus = async (n: NodeProcess, txID: string): Promise<string> => (await ok(n, 'avm.getTxStatus', { txID })).status as string;

/** Splits ewoq's biggest UTXO into `count` UTXOs of `each` (txs of up to 150 outputs, each awaited at `n`). */
export async function splitEwoq(n: NodeProcess, count: number, each = 1_000n, wait: (txID: string) => Promise<void>): Promise<Utxo[]> {
  let big = await ewoqUtxo(n);
  const pieces: Utxo[] = [];
  for (let left = count; left > 0; ) {
    const k = Math.min(150, left);
    if (big.out.kind !== 'transfer') throw new Error('not a transfer output');
    const outs = Array.from({ length: k }, () => transferOut(big.assetId, EWOQ.address, each));
    outs.push(transferOut(big.assetId, EWOQ.address, big.out.amount - each * BigInt(k)));
    const { tx, txID, unsigned } = signedBaseTx([big], outs);
    await ok(n, 'avm.issueTx', { tx });
    await wait(txID);
    const made = producedUtxos(Id.fromString(txID), unsigned);
    big = made.find((u) => u.out.kind === 'transfer' && u.out.amount > each)!;
    pieces.push(...made.filter((u) => u.out.kind === 'transfer' && u.out.amount === each));
    left -= k;
  }
  return pieces;
}
