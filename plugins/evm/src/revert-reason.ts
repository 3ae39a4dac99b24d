/**
 * The reason in revert data as geth's abi.UnpackRevert reads it: Error(string), or Panic(uint256)
 * named as geth names Solidity's codes. Apart from both sides (the RPC front end's "execution
 * reverted: …" texts and the tracers' revertReason), on nothing but the sdk. Tests: rpc-eth.test.ts
 * "revertReason", tracing.test.ts.
 */
import { utf8Decode } from '@cornice/sdk';

/** Solidity's Panic(uint256) codes, as geth names them. */
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

/** The reason in revert data (Error(string) or Panic(uint256)); undefined for other data (a custom error). */
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
