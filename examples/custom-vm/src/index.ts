import { defineVM } from '@cornice/sdk';
import { KvVM } from './vm.js';

/** What a node loads: vmId = "kvvm" zero-padded to 32 bytes. */
export const vmFactory = defineVM({ name: 'kvvm', version: '0.1.0', create: () => new KvVM() });

export { kvApi } from './api.js';
export { KvVM } from './vm.js';
