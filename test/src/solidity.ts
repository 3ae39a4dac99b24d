/**
 * Compiles Solidity source with solc-js (the `solc` npm package: no compiler download), as a user's
 * build would. One compilation per process: the test files share a contract and compile it once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import solc from 'solc';
import { REPO } from './fixtures.js';

export interface CompiledContract {
  abi: any[];
  /** 0x-prefixed creation bytecode. */
  bytecode: string;
}

/** cancun: what the C-Chain runs (and hardhat's node supports); no newer opcodes than the node knows. */
export const EVM_VERSION = 'cancun';

const cache = new Map<string, Record<string, CompiledContract>>();

/** Compiles one source file; throws with solc's messages on a compile error. */
export function compileSolidity(fileName: string, source: string): Record<string, CompiledContract> {
  const hit = cache.get(source);
  if (hit) return hit;
  const input = {
    language: 'Solidity',
    sources: { [fileName]: { content: source } },
    settings: { evmVersion: EVM_VERSION, optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
  const contracts: Record<string, CompiledContract> = {};
  for (const [name, c] of Object.entries<any>(out.contracts[fileName])) contracts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  cache.set(source, contracts);
  return contracts;
}

export const TOKEN_SOURCE_PATH = join(REPO, 'test/fixtures/evm/CorniceToken.sol');

/** The test ERC-20 (test/fixtures/evm/CorniceToken.sol), compiled from source. */
export function compileToken(): CompiledContract {
  return compileSolidity('CorniceToken.sol', readFileSync(TOKEN_SOURCE_PATH, 'utf8')).CorniceToken!;
}
