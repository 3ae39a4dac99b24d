import { defineVM, vmIdFromName, type Id, type VMFactory } from '@cornice/sdk';
import { parseGenesis } from './chain/genesis.js';
import type { EvmVMOptions } from './vm.js';
import { EVM_VM_VERSION } from './version.js';

/**
 * A VM factory for an EVM flavour: the C-Chain's (`vmFactory`) or an extension's (the subnet-EVM
 * passes its name, vmId and options: chain config parsing, fee rules, precompiles, RPC methods).
 */
export function defineEvmVM(def: {
  name: string;
  version?: string;
  vmId?: Id;
  options?: EvmVMOptions;
  /** platform.createBlockchain's genesis check (default: the genesis parses; see parseGenesis). */
  checkGenesis?: (genesis: Uint8Array) => void;
}): VMFactory {
  return defineVM({
    name: def.name,
    checkGenesis: def.checkGenesis ?? ((genesis) => void parseGenesis(genesis)),
    version: def.version ?? EVM_VM_VERSION,
    vmId: def.vmId ?? vmIdFromName(def.name),
    // The EVM (@ethereumjs and the chain) loads when a chain is made, not when the node loads its
    // plugins: importing it is slow, and every node start paid it, C-Chain or not (test: light-root.test.ts).
    create: async () => new (await import('./vm.js')).EvmVM(def.options),
  });
}

/** The C-Chain plugin: vmID `evm` zero-padded (mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6). */
export const vmFactory = defineEvmVM({ name: 'evm' });
