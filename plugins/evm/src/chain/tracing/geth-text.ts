/**
 * The words and encodings of geth's traces: opcode names, EVM error texts, revert reasons, hex.
 * @ethereumjs names its errors otherwise ("invalid JUMP", "revert", "static state change"); a trace
 * shows geth's, as anvil's does. Test: tracing.test.ts.
 */
import { toHex, utf8Decode } from '@cornice/sdk';

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

const PANIC_REASONS: ReadonlyMap<number, string> = new Map([
  [0x00, 'generic panic'],
  [0x01, 'assert(false)'],
  [0x11, 'arithmetic underflow or overflow'],
  [0x12, 'division or modulo by zero'],
  [0x21, 'enum overflow'],
  [0x22, 'invalid encoded storage byte array accessed'],
  [0x31, 'out-of-bounds array access; popping on an empty array'],
  [0x32, 'out-of-bounds access of an array or bytesN'],
  [0x41, 'out of memory'],
  [0x51, 'uninitialized function'],
]);

function word(data: Uint8Array, at: number): bigint | undefined {
  if (data.length < at + 32) return undefined;
  let n = 0n;
  for (let i = at; i < at + 32; i++) n = (n << 8n) | BigInt(data[i]!);
  return n;
}

/** The reason in revert data (Error(string) or Panic(uint256)) as geth unpacks it; undefined for other data (a custom error). */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  const selector = ((data[0]! << 24) | (data[1]! << 16) | (data[2]! << 8) | data[3]!) >>> 0;
  if (selector === 0x08c379a0) {
    const offset = word(data, 4);
    if (offset === undefined || offset > BigInt(data.length)) return undefined;
    const start = 4 + Number(offset);
    const length = word(data, start);
    if (length === undefined || BigInt(start + 32) + length > BigInt(data.length)) return undefined;
    return utf8Decode(data.subarray(start + 32, start + 32 + Number(length)));
  }
  if (selector === 0x4e487b71) {
    const code = word(data, 4);
    if (code === undefined) return undefined;
    return (code < 256n && PANIC_REASONS.get(Number(code))) || `unknown panic code: 0x${code.toString(16)}`;
  }
  return undefined;
}
