import { defineVM } from '@cornice/sdk';
import { avmStaticService } from './static-service.js';
import { AssetVM } from './vm.js';

/**
 * The asset VM plugin: vmID `avm` zero-padded (jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq);
 * avm.buildGenesis is its static service (/ext/vm/avm).
 */
export const vmFactory = defineVM({ name: 'avm', version: '0.1.0', create: () => new AssetVM(), staticServices: () => [avmStaticService()] });
