import { test } from 'uvu';
import { chainVMCompliance } from '@cornice/core/testing';
import { vmFactory, type EvmVM } from '../src/index.js';
import { EWOQ, GENESIS, addr, signedTx } from './helpers.js';

// Each block the checks build holds one transfer from ewoq at its next pending nonce.
for (const c of chainVMCompliance(vmFactory, {
  genesis: GENESIS,
  makePending: async (vm) => {
    const be = (vm as EvmVM).backend;
    await be.sendRawTransaction(signedTx({ nonce: await be.nonce(EWOQ, 'pending'), to: addr(2), value: 1n }).serialize());
  },
})) {
  test(c.name, c.run);
}

test.run();
