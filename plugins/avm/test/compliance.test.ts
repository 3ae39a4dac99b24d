import { test } from 'uvu';
import { chainVMCompliance } from '@cornice/core/testing';
import { type AssetVM, vmFactory } from '../src/index.js';
import { GENESIS, createAssetTx, transfer, EWOQ } from './vm-helpers.js';

// Each block the checks build gets a new asset: a CreateAssetTx needs no inputs, so it is always valid.
let n = 0;
for (const c of chainVMCompliance(vmFactory, {
  genesis: GENESIS,
  makePending: async (vm) => {
    await (vm as AssetVM).issueTx(createAssetTx(`Compliance ${n++}`, 'CMP', [transfer(1n, [EWOQ.address])]));
  },
})) {
  test(c.name, c.run);
}

test.run();
