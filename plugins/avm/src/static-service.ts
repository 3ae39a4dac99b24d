/**
 * avm.buildGenesis (API.md), the asset VM's static service, served at /ext/vm/avm: the bytes
 * (cb58) of an asset VM genesis from JSON genesis data. The data and its bounds are genesis.ts's.
 */
import { bindService, cb58Encode, defineService, method, p, result, type BoundService } from '@cornice/sdk';
import { encodeGenesisData, genesisDataParser } from './genesis.js';

export const avmStaticApi = defineService('avm', {
  buildGenesis: method({
    params: p.object({ genesisData: genesisDataParser }),
    result: result<{ bytes: string }>(),
    doc: 'The bytes (cb58) of an asset VM genesis: each alias -> {name, symbol, denomination, initialState: {fixedCap, variableCap}}',
  }),
});

/** avm.buildGenesis, bound (the node serves it at /ext/vm/avm). */
export function avmStaticService(): BoundService {
  return bindService(avmStaticApi, {
    async buildGenesis({ genesisData }) {
      return { bytes: cb58Encode(encodeGenesisData(genesisData)) };
    },
  });
}
