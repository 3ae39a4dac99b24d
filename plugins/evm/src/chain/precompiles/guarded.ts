/** The precompiles makeVM gives a VM beside the chain's own (offload.ts). */
import type { Common } from '@ethereumjs/common';
import { getActivePrecompiles, type EVMOpts } from '@ethereumjs/evm';
import { Address, hexToBytes } from '@ethereumjs/util';
import type { CallGuard } from '../call-guard.js';
import { offThreadBlake2f } from './blake2f.js';
import { pointEvaluation } from './kzg.js';
import { fastModexp } from './modexp.js';
import { sharedPrecompileWorker, type Precompile, type PrecompileWorker } from './offload.js';
import { offThreadPairing } from './pairing.js';

/** ethereumjs custom precompiles (a chain's option, and what a VM is made with). */
export type CustomPrecompiles = NonNullable<EVMOpts['customPrecompiles']>;

export const PAIRING_ADDRESS = '0000000000000000000000000000000000000008';
export const MODEXP_ADDRESS = '0000000000000000000000000000000000000005';
export const BLAKE2F_ADDRESS = '0000000000000000000000000000000000000009';
export const KZG_ADDRESS = '000000000000000000000000000000000000000a';

/**
 * `custom` plus: for every VM, MODEXP without @ethereumjs' quadratic loop (modexp.ts) and a KZG
 * point evaluation that works (kzg.ts); for a guarded VM, the pairing check, MODEXP, BLAKE2F and
 * KZG off the event loop. Not at addresses `custom` sets itself or that this hardfork lacks.
 */
export function withGuardedPrecompiles(common: Common, custom: CustomPrecompiles | undefined, guard?: CallGuard, worker: PrecompileWorker = sharedPrecompileWorker): CustomPrecompiles | undefined {
  const taken = new Set((custom ?? []).map((p) => p.address.toString().toLowerCase()));
  const active = getActivePrecompiles(common);
  const added: CustomPrecompiles = [];
  const add = (address: string, make: (stock: Precompile) => Precompile) => {
    const stock = active.get(address) as Precompile | undefined;
    if (stock && !taken.has(`0x${address}`)) added.push({ address: new Address(hexToBytes(`0x${address}`)), function: make(stock) as never });
  };
  add(MODEXP_ADDRESS, () => fastModexp(guard, worker));
  add(KZG_ADDRESS, () => pointEvaluation(guard, worker));
  if (guard) add(PAIRING_ADDRESS, (stock) => offThreadPairing(stock, guard, worker));
  if (guard) add(BLAKE2F_ADDRESS, (stock) => offThreadBlake2f(stock, guard, worker));
  return added.length === 0 ? custom : [...(custom ?? []), ...added];
}
