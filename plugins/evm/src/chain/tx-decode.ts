/**
 * A raw tx whose RLP has its type's shape (tx-rlp.ts), decoded as geth reads it. geth keeps fees
 * and value as unbounded integers and refuses what is too large in its pool, with its own texts;
 * @ethereumjs's constructor refuses them first with texts of its own ("gasLimit * maxFeePerGas
 * cannot exceed MAX_INTEGER (2^256-1)", "value cannot exceed MAX_INTEGER …"), which reached
 * clients as "invalid transaction: …". Here:
 *
 * - a fee cap (maxFeePerGas, or a legacy / EIP-2930 gasPrice) over 256 bits: "max fee per gas
 *   higher than 2^256-1"; a tip over 256 bits: "max priority fee per gas higher than 2^256-1"
 *   (both after "exceeds block gas limit", as geth checks them);
 * - v, r or s over 256 bits: "invalid sender" (no key signs that);
 * - gas × fee cap over 2^256-1, or a value over 256 bits: decoded (the tx is built with those fields
 *   zeroed, then given them back, so its hash and sender are its own), and admission goes on to
 *   geth's next checks — in the end "insufficient funds for gas * price + value: …", as no balance
 *   covers such a cost.
 *
 * Tests: mempool.test.ts "admission errors use Ethereum texts: values past 256 bits".
 */
import { RLP } from '@ethereumjs/rlp';
import type { Common } from '@ethereumjs/common';
import { createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { bytesToBigInt } from '@ethereumjs/util';

export const FEE_CAP_TOO_HIGH = 'max fee per gas higher than 2^256-1';
export const TIP_TOO_HIGH = 'max priority fee per gas higher than 2^256-1';
export const TIP_ABOVE_FEE_CAP = 'max priority fee per gas higher than max fee per gas';

const MAX_UINT256 = (1n << 256n) - 1n;

/** The fields of a raw tx geth's checks read, at their positions in the RLP list of each type. */
export interface RawTxFields {
  readonly type: number;
  /** The RLP list's items (the envelope's payload for a typed tx). */
  readonly items: Uint8Array[];
  readonly gas: bigint;
  readonly feeCap: bigint;
  readonly tip: bigint;
  readonly value: bigint;
  /** Where gas and value are in `items`. */
  readonly at: { readonly gas: number; readonly value: number; readonly sig: number };
}

/** The fields of a raw tx already checked by txRlpError (so it is a list of its type's shape). */
export function rawTxFields(raw: Uint8Array): RawTxFields {
  const type = raw[0]! >= 0xc0 ? 0 : raw[0]!;
  const items = RLP.decode(type === 0 ? raw : raw.subarray(1)) as Uint8Array[];
  const at = type === 0 ? { gas: 2, value: 4, sig: 6, price: 1, tip: 1 } : type === 1 ? { gas: 3, value: 5, sig: 8, price: 2, tip: 2 } : { gas: 4, value: 6, sig: 9, price: 3, tip: 2 };
  const int = (i: number): bigint => bytesToBigInt(items[i] ?? new Uint8Array());
  return { type, items, gas: int(at.gas), feeCap: int(at.price), tip: int(at.tip), value: int(at.value), at };
}

/**
 * geth's refusals of a tx's values that come before its sender is known (see the header), or
 * undefined. `blockGasLimit`: the last accepted block's.
 */
export function valueRefusal(f: RawTxFields, blockGasLimit: bigint): string | undefined {
  if (f.gas > blockGasLimit) return 'exceeds block gas limit';
  if (f.feeCap > MAX_UINT256) return FEE_CAP_TOO_HIGH;
  if (f.tip > MAX_UINT256) return TIP_TOO_HIGH;
  if (f.tip > f.feeCap) return TIP_ABOVE_FEE_CAP;
  for (let i = f.at.sig; i < f.at.sig + 3; i++) if ((f.items[i]?.length ?? 0) > 32) return 'invalid sender';
  return undefined;
}

/**
 * Decodes `raw` (its values passed valueRefusal). A tx whose gas × fee cap passes 2^256-1, or whose
 * value does, is built with gas and value zero and then given them back (unfrozen; admission
 * freezes it), so it goes on to geth's later checks.
 */
export function decodeRawTx(raw: Uint8Array, f: RawTxFields, common: Common): TypedTransaction {
  const overflow = f.gas * f.feeCap > MAX_UINT256 || f.value > MAX_UINT256;
  if (!overflow) return createTxFromRLP(raw, { common, freeze: false });
  const items = [...f.items];
  items[f.at.gas] = new Uint8Array();
  items[f.at.value] = new Uint8Array();
  const body = RLP.encode(items);
  const tx = createTxFromRLP(f.type === 0 ? body : Uint8Array.of(f.type, ...body), { common, freeze: false });
  Object.assign(tx, { gasLimit: f.gas, value: f.value });
  return tx;
}

/** geth's text for a value @ethereumjs refused building a tx (a fee or value past 256 bits), or undefined. */
export function txValueError(e: unknown): string | undefined {
  const m = e instanceof Error ? e.message : '';
  if (/^maxPriorityFeePerGas cannot exceed MAX_INTEGER/.test(m)) return TIP_TOO_HIGH;
  if (/^(maxFeePerGas|gasPrice) cannot exceed MAX_INTEGER/.test(m)) return FEE_CAP_TOO_HIGH;
  return undefined;
}

