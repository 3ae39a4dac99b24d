/**
 * Tracing on a subnet-EVM chain (issue 35): a stateful precompile — the native minter — shows in
 * callTracer as geth shows a precompile call: a frame to its address with its input, output, gas and
 * gasUsed, its error when it refuses, and (withLog) its NativeCoinMinted log. The debug API comes
 * from the node flag (ChainContext.debugApis) through the EVM plugin.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateAddress } from '@ethereumjs/util';
import type { EvmVM } from '@cornice/evm/chain';
import { addressWord, hex0x, MINT_GAS, NATIVE_COIN_MINTED_EVENT_GAS, NATIVE_COIN_MINTED_TOPIC, NATIVE_MINTER_ADDRESS, selector, uint256Word } from '../src/index.js';
import { ADMIN, addressOf, buildAndAccept, FAST_FEES, key, manualClock, plainAddress, send, serveRpc, startSubnetVM, subnetGenesis } from './chain-helpers.js';

const call = (signature: string, ...words: Uint8Array[]) => Uint8Array.from([...selector(signature), ...words.flatMap((w) => [...w])]);
const RECIPIENT = plainAddress(0x42);
const MINT = call('mintNativeCoin(address,uint256)', addressWord(RECIPIENT), uint256Word(5n));
/** ADMIN's first contract: a forwarder to the minter, enabled on its allow list at genesis. */
const FORWARDER = generateAddress(ADMIN, Uint8Array.of());
const STRANGER_KEY = key(7);
const STRANGER = addressOf(STRANGER_KEY);

/** Runtime: copy the calldata, CALL the minter with it and all gas, stop. */
const FORWARDER_RUNTIME = `366000600037600060003660006000730200000000000000000000000000000000000001${'5a'}f100`;
/** Init code returning FORWARDER_RUNTIME. */
function initCode(runtime: string): Uint8Array {
  const n = (runtime.length / 2).toString(16).padStart(2, '0');
  return Buffer.from(`60${n}600c60003960${n}6000f3${runtime}`, 'hex');
}

interface Frame {
  type: string;
  from: string;
  to: string;
  gas: string;
  gasUsed: string;
  input: string;
  output?: string;
  error?: string;
  value?: string;
  calls?: Frame[];
  logs?: Array<{ address: string; topics: string[]; data: string; position: string }>;
}

let vm: EvmVM;
let rpc: Awaited<ReturnType<typeof serveRpc>>;
test.before(async () => {
  const genesis = subnetGenesis(
    { feeConfig: FAST_FEES, contractNativeMinterConfig: { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], enabledAddresses: [hex0x(FORWARDER)] } },
    { [hex0x(STRANGER).slice(2)]: { balance: '0x' + (10n ** 24n).toString(16) } },
  );
  vm = await startSubnetVM({ genesis, clock: manualClock(1000), debugApis: true });
  rpc = await serveRpc(vm);
});
test.after(async () => {
  await rpc.close();
  await vm.shutdown();
});

const trace = (hash: Uint8Array, tracerConfig: object = {}): Promise<Frame> => rpc.ok('debug_traceTransaction', [hex0x(hash), { tracer: 'callTracer', tracerConfig }]);
const lower = (b: Uint8Array) => hex0x(b).toLowerCase();

test('a contract calling the native minter: a CALL frame to 0x0200…01 with its input, empty output, gas and gasUsed (30,000 + the event), and its log with withLog', async () => {
  const deploy = await send(vm, { nonce: 0n, data: initCode(FORWARDER_RUNTIME), gas: 200_000n });
  await buildAndAccept(vm);
  assert.is((await vm.backend.receipt(deploy))!.status, 1);
  const hash = await send(vm, { nonce: 1n, to: FORWARDER, data: MINT, gas: 200_000n });
  await buildAndAccept(vm);
  assert.is((await vm.backend.receipt(hash))!.status, 1);
  assert.is(await vm.backend.balance(RECIPIENT, 'latest'), 5n);

  const top = await trace(hash, { withLog: true });
  assert.is(top.to, lower(FORWARDER));
  assert.is(top.calls?.length, 1, JSON.stringify(top));
  const frame = top.calls![0]!;
  assert.is(frame.type, 'CALL');
  assert.is(frame.from, lower(FORWARDER));
  assert.is(frame.to, lower(NATIVE_MINTER_ADDRESS));
  assert.is(frame.input, hex0x(MINT));
  assert.is(frame.output, undefined, 'no output: geth leaves an empty one out');
  assert.is(frame.error, undefined);
  assert.is(frame.value, '0x0');
  assert.is(BigInt(frame.gasUsed), MINT_GAS + NATIVE_COIN_MINTED_EVENT_GAS);
  assert.ok(BigInt(frame.gas) > BigInt(frame.gasUsed) && BigInt(frame.gas) < 200_000n, frame.gas);
  assert.equal(
    frame.logs?.map((l) => [l.address, l.topics, l.data, l.position]),
    [[lower(NATIVE_MINTER_ADDRESS), [hex0x(NATIVE_COIN_MINTED_TOPIC), hex0x(addressWord(FORWARDER)), hex0x(addressWord(RECIPIENT))], hex0x(uint256Word(5n)), '0x0']],
  );
});

test('a tx straight to the minter: the top frame is the precompile call; its readAllowList answers as output', async () => {
  const hash = await send(vm, { nonce: 2n, to: NATIVE_MINTER_ADDRESS, data: call('readAllowList(address)', addressWord(ADMIN)), gas: 100_000n });
  await buildAndAccept(vm);
  const top = await trace(hash);
  assert.is(top.type, 'CALL');
  assert.is(top.to, lower(NATIVE_MINTER_ADDRESS));
  assert.is(top.output, hex0x(uint256Word(2n)), 'ADMIN is an admin (2)');
  assert.is(top.calls, undefined);
});

test('a caller the allow list does not enable: the frame keeps its input and gas and shows the precompile\'s error', async () => {
  const hash = await send(vm, { key: STRANGER_KEY, nonce: 0n, to: NATIVE_MINTER_ADDRESS, data: MINT, gas: 100_000n });
  await buildAndAccept(vm);
  assert.is((await vm.backend.receipt(hash))!.status, 0);
  const top = await trace(hash);
  assert.is(top.to, lower(NATIVE_MINTER_ADDRESS));
  assert.is(top.input, hex0x(MINT));
  assert.match(top.error ?? '', /non-enabled cannot mint/);
  assert.is(top.gas, '0x186a0');
});

test('trace_transaction (flatCallTracer, precompiles kept) lists the forwarder\'s call to the minter', async () => {
  const hash = await send(vm, { nonce: 3n, to: FORWARDER, data: MINT, gas: 200_000n });
  await buildAndAccept(vm);
  const flat = (await rpc.ok('trace_transaction', [hex0x(hash)])) as Array<{ action: { to: string; input: string; callType: string }; traceAddress: number[]; result?: { gasUsed: string } }>;
  assert.is(flat.length, 2, JSON.stringify(flat));
  assert.is(flat[1]!.action.to, lower(NATIVE_MINTER_ADDRESS));
  assert.is(flat[1]!.action.input, hex0x(MINT));
  assert.equal(flat[1]!.traceAddress, [0]);
  assert.is(BigInt(flat[1]!.result!.gasUsed), MINT_GAS + NATIVE_COIN_MINTED_EVENT_GAS);
});

test.run();
