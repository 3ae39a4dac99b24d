import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PrecompileCall } from '@cornice/evm';
import { concatBytes, fromHex, hasErrorCode, toHex } from '@cornice/sdk';
import {
  MemoryHookState,
  precompileModuleByKey,
  precompileModules,
  registerPrecompile,
  selector,
  uint256Word,
  type ChainConfigView,
  type FeeConfig,
} from '@cornice/subnet-evm';
import { COUNTER_SLOT, HELLO_WORLD_ADDRESS, helloWorld, INCREMENTED_TOPIC, registerHelloWorld } from '../src/index.js';

const ADMIN = fromHex('0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc');
const STRANGER = fromHex('0x0000000000000000000000000000000000000099');
const chain: ChainConfigView = {
  chainId: 99999n,
  feeConfig: {} as FeeConfig,
  allowFeeRecipients: false,
  upgrades: { durangoTimestamp: 0n },
  isDurango: () => true,
};

function call(state: MemoryHookState, signature: string, caller: Uint8Array, isStatic = false): PrecompileCall {
  return {
    address: HELLO_WORLD_ADDRESS,
    caller,
    origin: caller,
    value: 0n,
    input: concatBytes(selector(signature)),
    gas: 100_000n,
    isStatic,
    isDelegate: false,
    block: { number: 1n, timestamp: 1_700_000_000n, parentTimestamp: 1_699_999_999n, coinbase: new Uint8Array(20), baseFeePerGas: 1n },
    state,
  };
}

test('registered through the public API, then configured and called like a built-in', async () => {
  registerHelloWorld();
  assert.is(precompileModuleByKey('helloWorldConfig'), helloWorld);
  assert.is(precompileModules().at(-1), helloWorld);

  const config = helloWorld.parseConfig({ blockTimestamp: 0, adminAddresses: [`0x${toHex(ADMIN)}`], initialCount: 41 }, 'helloWorldConfig', chain);
  assert.equal(helloWorld.configJson(config), { blockTimestamp: 0, adminAddresses: [`0x${toHex(ADMIN)}`], initialCount: 41 });
  const state = new MemoryHookState();
  await helloWorld.configure(state, config, call(state, '', ADMIN).block, chain);
  const ctx = { config, chain };

  const inc = await helloWorld.run(call(state, 'increment()', ADMIN), ctx);
  assert.ok(inc.ok);
  if (inc.ok) {
    assert.is(inc.gasUsed, 25_000n + 1_381n);
    assert.equal(inc.logs!.map((l) => [l.topics.map(toHex), toHex(l.data)]), [[[toHex(INCREMENTED_TOPIC), toHex(concatBytes(new Uint8Array(12), ADMIN))], toHex(uint256Word(42n))]]);
  }
  const get = await helloWorld.run(call(state, 'getCounter()', STRANGER, true), ctx);
  assert.equal(get, { ok: true, output: uint256Word(42n), gasUsed: 5_000n, logs: [] });
  assert.is((await state.getStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT))[31], 42);

  // The allow list comes for free: a stranger is refused until the admin enables it.
  assert.equal(await helloWorld.run(call(state, 'increment()', STRANGER), ctx), {
    ok: false,
    error: 'non-enabled cannot increment: 0x0000000000000000000000000000000000000099',
    gasUsed: 100_000n,
  });
  const enable = call(state, 'setEnabled(address)', ADMIN);
  const enabled = await helloWorld.run({ ...enable, input: concatBytes(enable.input, new Uint8Array(12), STRANGER) }, ctx);
  assert.ok(enabled.ok);
  assert.ok((await helloWorld.run(call(state, 'increment()', STRANGER), ctx)).ok);
  assert.equal(await helloWorld.run(call(state, 'increment()', ADMIN, true), ctx), { ok: false, error: 'write protection', gasUsed: 100_000n });
  assert.is((await state.getStorage(HELLO_WORLD_ADDRESS, COUNTER_SLOT))[31], 43);

  // Registering twice is refused.
  try {
    registerPrecompile(helloWorld);
    assert.unreachable('registered twice');
  } catch (e) {
    assert.ok(hasErrorCode(e, 'DuplicateKey'));
  }
});

test.run();
