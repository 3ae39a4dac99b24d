/**
 * eth_simulateV1 and eth_createAccessList on a chain with the subnet-EVM's rules: a stateful
 * precompile runs in a simulated block (its effect carried to the next) and is left out of an
 * access list as a precompile.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addressWord, hex0x, NATIVE_MINTER_ADDRESS, selector, uint256Word } from '../src/index.js';
import { ADMIN, FAST_FEES, manualClock, plainAddress, startSubnetVM, subnetGenesis } from './chain-helpers.js';

const concat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

test('eth_simulateV1: a native minter mint in one simulated block, the balance seen in the next; eth_createAccessList leaves the precompile out', async () => {
  const genesis = subnetGenesis({ feeConfig: FAST_FEES, contractNativeMinterConfig: { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)] } });
  const vm = await startSubnetVM({ genesis, clock: manualClock(1000) });
  try {
    const recipient = plainAddress(0x42);
    const mint = concat(selector('mintNativeCoin(address,uint256)'), addressWord(recipient), uint256Word(5n));
    // BALANCE(recipient) returned.
    const reader = plainAddress(0x99);
    const readerCode = Uint8Array.from([0x73, ...recipient, 0x31, 0x5f, 0x52, 0x60, 0x20, 0x5f, 0xf3]);
    const out = await vm.backend.simulate(
      {
        blocks: [
          { calls: [{ from: ADMIN, to: NATIVE_MINTER_ADDRESS, data: mint }] },
          { stateOverrides: new Map([[hex0x(reader), { code: readerCode }]]), calls: [{ to: reader }] },
        ],
        traceTransfers: false,
        validation: false,
      },
      'latest',
    );
    assert.is(out[0]!.calls[0]!.status, 1, JSON.stringify(out[0]!.calls[0]!.error));
    assert.is(BigInt(hex0x(out[1]!.calls[0]!.returnData)), 5n);
    assert.is(await vm.backend.balance(recipient, 'latest'), 0n, 'nothing stayed');
    const list = await vm.backend.createAccessList({ from: ADMIN, to: reader }, 'latest', new Map([[hex0x(reader), { code: Uint8Array.from([0x73, ...NATIVE_MINTER_ADDRESS, 0x31, 0x00]) }]]));
    assert.equal(list.accessList, []);
  } finally {
    await vm.shutdown();
  }
});

test.run();
