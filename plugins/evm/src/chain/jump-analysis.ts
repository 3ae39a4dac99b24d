/**
 * @ethereumjs' interpreter analyses a contract's code (valid JUMPDESTs, PUSH values, opcode table)
 * every time it runs it: for the 1.3 KB ERC-20 of the benchmark, ~90 µs of each ~0.7 ms eth_call.
 * The analysis only depends on the code and the EVM's opcode table, and the interpreter only reads
 * it, so it is kept per (opcode table, code array): the state manager's caches hand out the same
 * code array while the code is cached. The interpreter is not exported by @ethereumjs/evm: its module
 * is loaded by file (the same module the package uses) and its prototype method wrapped once.
 */
import { importEvmInternal } from './evm-internals.js';

interface Analysis {
  readonly jumps: Uint8Array;
  readonly pushes: Record<number, bigint>;
  readonly opcodesCached: unknown[];
}

interface InterpreterProto {
  _getValidJumpDestinations(code: Uint8Array): Analysis;
  lookupOpInfo(op: number): unknown;
  __corniceJumpCache?: true;
}

/** How often an analysis was reused or made (for tests and benchmarks). */
export const jumpAnalysisStats = { hits: 0, misses: 0 };

let installed: Promise<boolean> | undefined;

async function load(): Promise<boolean> {
  try {
    const mod = await importEvmInternal<{ Interpreter?: { prototype: InterpreterProto } }>('interpreter.js');
    const proto = mod.Interpreter?.prototype;
    if (!proto || typeof proto._getValidJumpDestinations !== 'function') return false;
    if (proto.__corniceJumpCache) return true;
    const analyse = proto._getValidJumpDestinations;
    /** Per opcode table (an EVM's), per code array. */
    const byTable = new WeakMap<object, WeakMap<Uint8Array, Analysis>>();
    proto._getValidJumpDestinations = function (this: InterpreterProto & { _evm: { _opcodeMap: object } }, code: Uint8Array): Analysis {
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
    };
    proto.__corniceJumpCache = true;
    return true;
  } catch {
    return false;
  }
}

/** Installs the cache once (resolves false when the interpreter could not be found: nothing changes). */
export function installJumpAnalysisCache(): Promise<boolean> {
  return (installed ??= load());
}
