/**
 * How many stack items each opcode takes and leaves, for geth's stack error texts
 * (`stack underflow (1 <=> 2)`, `stack limit reached 1024 (1023)`): @ethereumjs' own table, which its
 * package does not export, loaded by file once.
 */
import { importEvmInternal } from '../patches/evm-internals.js';

type Table = Record<number, { readonly inputs: number; readonly outputs: number } | undefined>;

let table: Table = {};
let loading: Promise<void> | undefined;

export function loadStackTable(): Promise<void> {
  return (loading ??= importEvmInternal<{ stackDelta?: Table }>('eof/stackDelta.js').then(
    (m) => void (table = m.stackDelta ?? {}),
    () => undefined,
  ));
}

/** Items opcode `code` takes and leaves (0 and 0 when not known). */
export function stackInputsOutputs(code: number): { inputs: number; outputs: number } {
  const d = table[code];
  return { inputs: d?.inputs ?? 0, outputs: d?.outputs ?? 0 };
}
