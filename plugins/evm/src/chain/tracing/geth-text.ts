/**
 * The words and encodings of geth's traces: opcode names, EVM error texts, revert reasons, hex.
 * @ethereumjs names its errors otherwise ("invalid JUMP", "revert", "static state change"); a trace
 * shows geth's, as anvil's does. Test: tracing.test.ts.
 */
import { toHex } from '@cornice/sdk';

export const hex = (b: Uint8Array): string => `0x${toHex(b)}`;
export const quantity = (n: bigint | number): string => `0x${n.toString(16)}`;

/** geth's name of opcode `code` (@ethereumjs' `name`, or INVALID for a code it does not define). */
export function opName(code: number, name: string): string {
  if (name === 'INVALID' && code !== 0xfe) return `opcode 0x${code.toString(16)} not defined`;
  return name;
}

/** @ethereumjs' EVM error texts and geth's for the same halt. */
const GETH_ERRORS: ReadonlyMap<string, string> = new Map([
  ['out of gas', 'out of gas'],
  ['code store out of gas', 'contract creation code storage out of gas'],
  ['code size to deposit exceeds maximum code size', 'max code size exceeded'],
  ['stack underflow', 'stack underflow'],
  ['stack overflow', 'stack overflow'],
  ['invalid JUMP', 'invalid jump destination'],
  ['revert', 'execution reverted'],
  ['static state change', 'write protection'],
  ['create collision', 'contract address collision'],
  ['insufficient balance', 'insufficient balance for transfer'],
  ['invalid bytecode deployed', 'invalid code: must not begin with 0xef'],
  ['initcode exceeds max initcode size', 'max initcode size exceeded'],
  ['value out of range', 'return data out of bounds'],
  ['value overflow', 'gas uint64 overflow'],
]);

/**
 * geth's text of a frame's halt. `invalidOp` names the opcode of an "invalid opcode" halt
 * (geth: `invalid opcode: INVALID`, `invalid opcode: opcode 0xef not defined`). Texts geth has no
 * equivalent for (a precompile's, the chain rules') are kept as they are.
 */
export function gethError(error: string, invalidOp?: string): string {
  if (error === 'invalid opcode') return `invalid opcode: ${invalidOp ?? 'INVALID'}`;
  return GETH_ERRORS.get(error) ?? error;
}

export const REVERTED = 'execution reverted';

export { revertReason } from '../../revert-reason.js';
