import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, vmIdFromName } from '@cornice/sdk';
import { networkGenesis, runnableChains } from '../../src/genesis/genesis.js';
import { captureLog } from '../helpers/log.js';

const timestampVm = vmIdFromName('timestamp');
const loaded = (...ids: Id[]) => ({ has: (id: Id) => ids.some((x) => x.equals(id)) });

test('genesis chains whose VM is loaded are run; the others are named in a warning', () => {
  const genesis = networkGenesis(12345)!;
  const log = captureLog();
  assert.equal(runnableChains(genesis, loaded(timestampVm), log), genesis.chains);
  assert.equal(log.lines, []);

  assert.equal(runnableChains(genesis, loaded(), log), []);
  assert.equal(log.lines, [
    {
      level: 'warn',
      msg: 'genesis chain not run: its VM is not loaded',
      fields: {
        chain: 'Simple Timestamp Server',
        chainId: genesis.chains[0]!.id.toString(),
        alias: 'timestamp',
        vmId: timestampVm.toString(),
        vm: 'timestamp',
      },
    },
  ]);
});

test('a vmID that is not a padded name is reported without a VM name', () => {
  const genesis = networkGenesis(12345)!;
  const odd = Id.fromBytes(new Uint8Array(32).fill(0xff));
  const log = captureLog();
  runnableChains({ ...genesis, chains: [{ ...genesis.chains[0]!, vmId: odd }] }, loaded(), log);
  assert.is(log.lines[0]!.fields?.vm, undefined);
  assert.is(log.lines[0]!.fields?.vmId, odd.toString());
});

test.run();
