import { defineVM } from '@cornice/sdk';
import { AssetVM } from './vm.js';

/** The asset VM plugin (vmID = `avm` zero-padded: jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq). */
export const vmFactory = defineVM({ name: 'avm', version: '0.1.0', create: () => new AssetVM() });
