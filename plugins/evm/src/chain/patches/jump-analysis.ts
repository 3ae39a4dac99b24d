/**
 * @ethereumjs' interpreter analyses a contract's code (valid JUMPDESTs, PUSH values, opcode table)
 * every time it runs it: a visible part of each eth_call of the benchmark's 1.3 KB ERC-20 (bench/evm.mjs,
 * "EVM eth_call/s"; plugins/evm/bench/call-bench.mjs).
 * The analysis only depends on the code and the EVM's opcode table, and the interpreter only reads
 * it, so it is kept per (opcode table, code array): the state manager's caches hand out the same
 * code array while the code is cached. The interpreter is not exported by @ethereumjs/evm: its module
 * is loaded by file (the same module the package uses) and its prototype method wrapped once.
 */
import { wrapInterpreterMethod } from './evm-internals.js';

interface Analysis {
  readonly jumps: Uint8Array;
  readonly pushes: Record<number, bigint>;
  readonly opcodesCached: unknown[];
}

interface InterpreterThis {
  readonly _evm: { readonly _opcodeMap: object };
}
type Analyse = (this: InterpreterThis, code: Uint8Array) => Analysis;

/** How often an analysis was reused or made (for tests and benchmarks). */
export const jumpAnalysisStats = { hits: 0, misses: 0 };

/** Per opcode table (an EVM's), per code array. */
const byTable = new WeakMap<object, WeakMap<Uint8Array, Analysis>>();

/** Installs the cache once (resolves false when the interpreter could not be found: nothing changes). */
export function installJumpAnalysisCache(): Promise<boolean> {
  return wrapInterpreterMethod<Analyse>('_getValidJumpDestinations', (analyse) =>
    function (this: InterpreterThis, code: Uint8Array): Analysis {
      const table = this._evm._opcodeMap;
      let byCode = byTable.get(table);
      if (!byCode) byTable.set(table, (byCode = new WeakMap()));
      let a = byCode.get(code);
      if (a) {
        jumpAnalysisStats.hits++;
        return a;
      }
      jumpAnalysisStats.misses++;
      a = analyse.call(this, code);
      byCode.set(code, a);
      return a;
    },
  );
}
