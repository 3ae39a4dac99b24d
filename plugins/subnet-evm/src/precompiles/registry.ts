/**
 * The precompile modules a subnet-EVM chain knows: the five built-ins (A.3) and those a third party
 * registered with `registerPrecompile` before its chains start. A module's address must lie in a
 * reserved range (0x0100…00–ff, 0x0200…00–ff, 0x0300…00–ff, not the black-hole address) and its
 * key and address must be unique (precompile/modules/registerer.go).
 */
import { BLACKHOLE_ADDRESS } from '@cornice/evm';
import { bytesEqual, toHex } from '@cornice/sdk';
import type { PrecompileConfigBase, PrecompileModule } from '../types.js';
import { contractDeployerAllowList } from './deployer-allow-list.js';
import { PrecompileRegistryError } from './errors.js';
import { feeManager } from './fee-manager.js';
import { contractNativeMinter } from './native-minter.js';
import { rewardManager } from './reward-manager.js';
import { txAllowList } from './tx-allow-list.js';

// Modules of any config type live side by side; each is only ever given its own config.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
// biome-ignore lint/suspicious/noExplicitAny: a module of any config type (PrecompileModule is invariant in it)
export type AnyModule = PrecompileModule<any>;

/** The built-in modules, in address order. */
export function builtinPrecompiles(): readonly AnyModule[] {
  return [contractDeployerAllowList, contractNativeMinter, txAllowList, feeManager, rewardManager];
}

const registered: AnyModule[] = [];

/** True for an address in a reserved range (the first byte 1, 2 or 3, then 18 zero bytes, any last byte). */
export function isReservedPrecompileAddress(address: Uint8Array): boolean {
  if (address.length !== 20 || address[0]! < 1 || address[0]! > 3) return false;
  for (let i = 1; i < 19; i++) if (address[i] !== 0) return false;
  return !bytesEqual(address, BLACKHOLE_ADDRESS);
}

/**
 * Adds a third party's module (before the chains that use it start). Throws PrecompileRegistryError
 * for a module without a key, address or handlers, an address outside the reserved ranges, or a key
 * or address already taken.
 */
export function registerPrecompile<C extends PrecompileConfigBase>(module: PrecompileModule<C>): void {
  checkPrecompileModule(module, precompileModules());
  registered.push(module);
}

/**
 * Throws PrecompileRegistryError unless `module` is a complete module at a reserved address whose key
 * and address none of `others` uses.
 */
export function checkPrecompileModule<C extends PrecompileConfigBase>(module: PrecompileModule<C>, others: readonly AnyModule[]): void {
  const m = module as Partial<PrecompileModule<C>> | undefined;
  if (typeof m !== 'object' || m === null) throw new PrecompileRegistryError('InvalidModule', 'precompile module must be an object');
  if (typeof m.key !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*$/.test(m.key)) {
    throw new PrecompileRegistryError('InvalidModule', `precompile module key must be a non-empty identifier, got ${JSON.stringify(m.key)}`);
  }
  for (const fn of ['parseConfig', 'configJson', 'configure', 'run'] as const) {
    if (typeof m[fn] !== 'function') throw new PrecompileRegistryError('InvalidModule', `precompile module ${m.key}: ${fn} must be a function`);
  }
  if (!(m.address instanceof Uint8Array) || m.address.length !== 20) {
    throw new PrecompileRegistryError('InvalidModule', `precompile module ${m.key}: address must be 20 bytes`);
  }
  const address = `0x${toHex(m.address)}`;
  if (!isReservedPrecompileAddress(m.address)) {
    throw new PrecompileRegistryError(
      'ReservedAddress',
      `address ${address} of precompile module ${m.key} is not in a reserved range (0x0100…00–ff, 0x0200…00–ff, 0x0300…00–ff, not the black-hole address)`,
    );
  }
  for (const other of others) {
    if (other.key === m.key) throw new PrecompileRegistryError('DuplicateKey', `precompile config key ${m.key} is already registered`);
    if (bytesEqual(other.address, m.address)) {
      throw new PrecompileRegistryError('DuplicateAddress', `address ${address} of precompile module ${m.key} is already used by ${other.key}`);
    }
  }
}

/** The built-ins and the registered modules (a chain's config keys are looked up here). */
export function precompileModules(): readonly AnyModule[] {
  return [...builtinPrecompiles(), ...registered];
}

/** The module of a config key, or undefined. */
export function precompileModuleByKey(key: string): AnyModule | undefined {
  return precompileModules().find((m) => m.key === key);
}
