import { defineVM } from '@cornice/sdk';
import { parseGenesis } from './genesis.js';
import { Vm } from './vm.js';

/**
 * What a node loads (`cornice --vms=__PACKAGE_NAME__`): a named export `vmFactory`. Its vmID is the
 * name zero-padded to 32 bytes: __VM_ID__.
 */
export const vmFactory = defineVM({
  name: '__VM_NAME__',
  version: '0.1.0',
  create: () => new Vm(),
  // platform.createBlockchain refuses bad genesis data with this reason, before the chain exists.
  checkGenesis: (genesis) => void parseGenesis(genesis),
});

export { api } from './api.js';
export { Vm } from './vm.js';
export { VmError, type VmErrorCode } from './errors.js';
