import { defineVM, vmIdFromName, type Id, type VMFactory } from '@cornice/sdk';
import { EVM_VM_VERSION, EvmVM, type EvmVMOptions } from './vm.js';

/**
 * A VM factory for an EVM flavour: the C-Chain's (`vmFactory`) or an extension's (the subnet-EVM
 * passes its name, vmId and options: chain config parsing, fee rules, precompiles, RPC methods).
 */
export function defineEvmVM(def: { name: string; version?: string; vmId?: Id; options?: EvmVMOptions }): VMFactory {
  return defineVM({
    name: def.name,
    version: def.version ?? EVM_VM_VERSION,
    vmId: def.vmId ?? vmIdFromName(def.name),
    create: () => new EvmVM(def.options),
  });
}

/** The C-Chain plugin: vmID `evm` zero-padded (mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6). */
export const vmFactory = defineEvmVM({ name: 'evm' });
