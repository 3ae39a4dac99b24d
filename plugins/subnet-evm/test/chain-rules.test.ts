/**
 * The subnet-EVM's chain rules (src/chain-rules.ts) on real EvmVMs made with subnetEvmOptions:
 * header fields built on one VM and verified on another, the precompile schedule with an injected
 * clock, the fee config from the fee manager's storage, the block gas cost, the coinbase rules.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode } from '@cornice/sdk';
import { BLACKHOLE_ADDRESS, type ChainRules, type EvmVMOptions } from '@cornice/evm';
import type { EvmVM } from '@cornice/evm/chain';
import {
  addressWord,
  checksumAddress,
  decodeExtraData,
  EXTRA_DATA_BYTES,
  FEE_MANAGER_ADDRESS,
  hex0x,
  leftPad32,
  NATIVE_MINTER_ADDRESS,
  REWARD_MANAGER_ADDRESS,
  selector,
  subnetEvmOptions,
  TX_ALLOW_LIST_ADDRESS,
  uint256Word,
} from '../src/index.js';
import {
  ADMIN,
  buildAndAccept,
  FAST_FEES,
  GWEI,
  manualClock,
  plainAddress,
  rejection,
  replay,
  send,
  serveRpc,
  startSubnetVM,
  subnetGenesis,
  tampered,
} from './chain-helpers.js';

const ZERO_WORD = hex0x(new Uint8Array(32));
const call = (signature: string, ...words: Uint8Array[]) => Uint8Array.from([...selector(signature), ...words.flatMap((w) => [...w])]);

async function shutdown(...vms: EvmVM[]): Promise<void> {
  for (const vm of vms) await vm.shutdown();
}

test('a block built on one VM verifies on another: gas limit, base fee, fee window and coinbase; tampered ones are refused with verifyHeader texts', async () => {
  const genesis = subnetGenesis({ feeConfig: { ...FAST_FEES, targetGas: 30_000 } });
  const clock = manualClock(1000);
  const a = await startSubnetVM({ genesis, clock });
  const b = await startSubnetVM({ genesis, clock });
  try {
    await send(a, { nonce: 0n, to: plainAddress(1), value: 1n });
    await send(a, { nonce: 1n, to: plainAddress(1), value: 1n });
    const b1 = await buildAndAccept(a);
    // On the genesis: the fee config's gas limit and minBaseFee, an empty window, no block gas cost.
    assert.is(b1.eth.header.gasLimit, 20_000_000n);
    assert.is(b1.eth.header.baseFeePerGas, GWEI);
    assert.is(hex0x(b1.eth.header.coinbase.bytes), hex0x(BLACKHOLE_ADDRESS));
    assert.is(b1.eth.header.extraData.length, EXTRA_DATA_BYTES);
    assert.equal(decodeExtraData(b1.eth.header.extraData), { window: new Array(10).fill(0n), blockGasCost: 0n });
    await replay(b, b1.bytes);

    clock.at(1001);
    await send(a, { nonce: 2n, to: plainAddress(1), value: 1n });
    const b2 = await a.buildBlock();
    // 42,000 gas one second ago, over a 30,000 target: 1 gwei + 1 gwei * 12,000 / 30,000 / 48.
    assert.is(b2.eth.header.baseFeePerGas, GWEI + 8_333_333n);
    const window = decodeExtraData(b2.eth.header.extraData).window;
    assert.is(window[8], 42_000n);
    assert.is(window[9], 0n);

    const refusals: Array<[Record<string, string>, string]> = [
      [{ gasLimit: '0x1312d01' }, 'invalid gas limit: have 20000001, want 20000000'],
      [{ baseFeePerGas: '0x3b9aca00' }, `invalid base fee: have ${GWEI}, want ${GWEI + 8_333_333n}`],
      [{ extraData: hex0x(new Uint8Array(EXTRA_DATA_BYTES)) }, 'invalid extra data: the fee window or block gas cost does not follow the fee config'],
      [
        { coinbase: hex0x(plainAddress(7)) },
        `invalid coinbase: ${checksumAddress(plainAddress(7))} does not match required coinbase address ${checksumAddress(BLACKHOLE_ADDRESS)}`,
      ],
    ];
    for (const [header, why] of refusals) {
      const bad = await b.parseBlock(tampered(b, b2, header));
      const e = await rejection(bad.verify());
      assert.ok(hasErrorCode(e, 'InvalidBlock'), String(e));
      assert.is(e.message, `invalid block ${bad.id}: ${why}`);
    }
    await b2.verify();
    await a.setPreference(b2.id);
    await b2.accept();
    const r2 = await replay(b, b2.bytes);
    assert.is(hex0x(r2.eth.header.stateRoot), hex0x(b2.eth.header.stateRoot));
    // The black hole got the base fees (creditBaseFee): 63,000 gas, no tips.
    assert.is(await b.backend.balance(BLACKHOLE_ADDRESS, 'latest'), 42_000n * GWEI + 21_000n * (GWEI + 8_333_333n));
  } finally {
    await shutdown(a, b);
  }
});

test('precompile schedule: inactive before its upgrade time, enabled in the first block crossing it (nonce 1, code 0x01, roles), wiped by a later disable', async () => {
  const upgrade = JSON.stringify({
    precompileUpgrades: [
      { contractNativeMinterConfig: { blockTimestamp: 1100, adminAddresses: [hex0x(ADMIN)] } },
      { contractNativeMinterConfig: { blockTimestamp: 1200, disable: true } },
    ],
  });
  const genesis = subnetGenesis({ feeConfig: FAST_FEES });
  const clock = manualClock(1000);
  const vm = await startSubnetVM({ genesis, clock, upgrade });
  const other = await startSubnetVM({ genesis, clock, upgrade });
  const recipient = plainAddress(0x42);
  const mint = call('mintNativeCoin(address,uint256)', addressWord(recipient), uint256Word(5n));
  const adminSlot = leftPad32(ADMIN);
  const readRole = () => vm.backend.call({ to: NATIVE_MINTER_ADDRESS, data: call('readAllowList(address)', addressWord(ADMIN)) }, 'latest');
  try {
    // Before 1100: an ordinary empty account (a call succeeds and does nothing).
    const before = await send(vm, { nonce: 0n, to: NATIVE_MINTER_ADDRESS, data: mint, gas: 100_000n });
    await replay(other, (await buildAndAccept(vm)).bytes);
    assert.is((await vm.backend.receipt(before))!.status, 1);
    assert.is(await vm.backend.balance(recipient, 'latest'), 0n);
    assert.is(hex0x(await vm.backend.code(NATIVE_MINTER_ADDRESS, 'latest')), '0x');
    assert.is(await vm.backend.nonce(NATIVE_MINTER_ADDRESS, 'latest'), 0n);
    assert.equal((await readRole()).returnData, new Uint8Array());

    // The block at 1105 crosses 1100: activated before its txs run.
    clock.at(1105);
    const during = await send(vm, { nonce: 1n, to: NATIVE_MINTER_ADDRESS, data: mint, gas: 100_000n });
    await replay(other, (await buildAndAccept(vm)).bytes);
    assert.is(hex0x(await vm.backend.code(NATIVE_MINTER_ADDRESS, 'latest')), '0x01');
    assert.is(await vm.backend.nonce(NATIVE_MINTER_ADDRESS, 'latest'), 1n);
    assert.is(hex0x(await vm.backend.storageAt(NATIVE_MINTER_ADDRESS, adminSlot, 'latest')), hex0x(uint256Word(2n)));
    assert.is(hex0x((await readRole()).returnData), hex0x(uint256Word(2n)));
    const minted = (await vm.backend.receipt(during))!;
    assert.is(minted.status, 1);
    assert.is(minted.logs.length, 1);
    assert.is(await vm.backend.balance(recipient, 'latest'), 5n);

    // The block at 1200 disables it: account, code and roles gone; a mint does nothing again.
    clock.at(1200);
    const after = await send(vm, { nonce: 2n, to: NATIVE_MINTER_ADDRESS, data: mint, gas: 100_000n });
    const b3 = await buildAndAccept(vm);
    await replay(other, b3.bytes);
    assert.is((await vm.backend.receipt(after))!.status, 1);
    assert.is(await vm.backend.balance(recipient, 'latest'), 5n);
    assert.is(hex0x(await vm.backend.code(NATIVE_MINTER_ADDRESS, 'latest')), '0x');
    assert.is(await vm.backend.nonce(NATIVE_MINTER_ADDRESS, 'latest'), 0n);
    assert.is(hex0x(await vm.backend.storageAt(NATIVE_MINTER_ADDRESS, adminSlot, 'latest')), ZERO_WORD);
    assert.is(hex0x(other.chain.lastAccepted.eth.header.stateRoot), hex0x(b3.eth.header.stateRoot));
  } finally {
    await shutdown(vm, other);
  }
});

test('tx allow list: a role changed by a tx counts for the next tx of the same block, and for admission once its block is accepted (the answers are not kept past a change)', async () => {
  const genesis = subnetGenesis({ feeConfig: FAST_FEES, txAllowListConfig: { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)] } });
  const clock = manualClock(1000);
  const vm = await startSubnetVM({ genesis, clock });
  const refusal = `cannot issue transaction from non-allow listed address: ${checksumAddress(ADMIN)}`;
  try {
    // The admin takes its own role away, then sends again: both admitted on the genesis state.
    await send(vm, { nonce: 0n, to: TX_ALLOW_LIST_ADDRESS, data: call('setNone(address)', addressWord(ADMIN)), gas: 100_000n });
    const second = await send(vm, { nonce: 1n, to: plainAddress(1), value: 1n });
    clock.at(1001);
    const b1 = await buildAndAccept(vm);
    assert.is(b1.eth.transactions.length, 1, 'the second tx ran after the role was gone: left out');
    assert.is(await vm.backend.receipt(second), undefined);
    // Admission reads the accepted state of block 1: refused now.
    assert.is((await rejection(send(vm, { nonce: 1n, to: plainAddress(1), value: 2n }))).message, refusal);
  } finally {
    await shutdown(vm);
  }
});

test('fee manager: once setFeeConfig runs, the next block follows the stored config; eth_feeConfig reports it with lastChangedAt', async () => {
  const genesis = subnetGenesis({ feeConfig: FAST_FEES, feeManagerConfig: { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)] } });
  const clock = manualClock(1000);
  const vm = await startSubnetVM({ genesis, clock });
  const rpc = await serveRpc(vm);
  const next = { ...FAST_FEES, gasLimit: 30_000_000, minBaseFee: 3_000_000_000 };
  const order = ['gasLimit', 'targetBlockRate', 'minBaseFee', 'targetGas', 'baseFeeChangeDenominator', 'minBlockGasCost', 'maxBlockGasCost', 'blockGasCostStep'] as const;
  try {
    const set = await send(vm, {
      nonce: 0n,
      to: FEE_MANAGER_ADDRESS,
      data: call(`setFeeConfig(${order.map(() => 'uint256').join(',')})`, ...order.map((f) => uint256Word(BigInt(next[f])))),
      gas: 300_000n,
    });
    const b1 = await buildAndAccept(vm);
    assert.is((await vm.backend.receipt(set))!.status, 1);
    // Block 1 was built on the genesis config.
    assert.is(b1.eth.header.gasLimit, 20_000_000n);
    assert.is(b1.eth.header.baseFeePerGas, GWEI);

    clock.at(1001);
    await send(vm, { nonce: 1n, to: plainAddress(1) });
    const b2 = await buildAndAccept(vm);
    assert.is(b2.eth.header.gasLimit, 30_000_000n);
    assert.is(b2.eth.header.baseFeePerGas, 3n * GWEI);

    assert.equal(await rpc.ok('eth_feeConfig'), { feeConfig: next, lastChangedAt: 1 });
    assert.equal(await rpc.ok('eth_feeConfig', [{ blockHash: hex0x(b1.eth.hash()) }]), { feeConfig: next, lastChangedAt: 1 });
    // At genesis the fee manager stored the genesis config (its activation block: 0).
    assert.equal(await rpc.ok('eth_feeConfig', ['0x0']), { feeConfig: FAST_FEES, lastChangedAt: 0 });
    const lastChanged = await vm.backend.call({ to: FEE_MANAGER_ADDRESS, data: call('getFeeConfigLastChangedAt()') }, 'latest');
    assert.is(hex0x(lastChanged.returnData), hex0x(uint256Word(1n)));
  } finally {
    await rpc.close();
    await shutdown(vm);
  }
});

/** The subnet-EVM's options with rules that do not check the block fee (a foreign builder). */
const noFeeCheck: EvmVMOptions = {
  ...subnetEvmOptions,
  rules: (genesis, upgrade) => {
    const { verifyBlockFee: _, ...rest }: ChainRules = subnetEvmOptions.rules!(genesis, upgrade);
    return rest;
  },
};

test('block gas cost (default fee config): a tip-less tx waits for buildableAt; tips that pay the cost build at once; a foreign block that does not pay is refused', async () => {
  const genesis = subnetGenesis();
  const clock = manualClock(1000);
  const vm = await startSubnetVM({ genesis, clock });
  try {
    await send(vm, { nonce: 0n, to: plainAddress(1) });
    const b1 = await buildAndAccept(vm);
    assert.is(b1.eth.header.gasLimit, 8_000_000n);
    assert.is(b1.eth.header.baseFeePerGas, 25n * GWEI);

    // 0 s after a zero-cost parent: the block costs 2 s x 200,000 gas.
    await send(vm, { nonce: 1n, to: plainAddress(1) });
    const e = await rejection(vm.buildBlock());
    assert.ok(hasErrorCode(e, 'NothingToBuild'), String(e));
    assert.match(e.message, 'the block would fail the block-fee check: insufficient gas (0) to cover the block cost (400000) at base fee (25000000000) (total block fee: 0)');
    const ac = new AbortController();
    let event: string | undefined;
    const waiting = vm.waitForEvent(ac.signal).then((ev) => (event = ev));
    clock.at(1001);
    vm.chain.wake();
    await new Promise((r) => setTimeout(r, 50));
    assert.is(event, undefined, 'still 200,000 gas to pay at 1001');
    clock.at(1002);
    vm.chain.wake();
    await waiting;
    assert.is(event, 'pendingTxs');
    const b2 = await buildAndAccept(vm);
    assert.is(b2.eth.header.timestamp, 1002n);
    assert.is(decodeExtraData(b2.eth.header.extraData).blockGasCost, 0n);

    // Tips worth 420,000 gas at 25 gwei pay for a block 0 s later.
    await send(vm, { nonce: 2n, to: plainAddress(1), tip: 500n * GWEI });
    const b3 = await buildAndAccept(vm);
    assert.is(b3.eth.header.timestamp, 1002n);
    assert.is(decodeExtraData(b3.eth.header.extraData).blockGasCost, 400_000n);
    assert.is(await latestBlockGasCost(vm), '0x61a80');
  } finally {
    await shutdown(vm);
  }

  const builder = await startSubnetVM({ genesis, clock, opts: noFeeCheck });
  const verifier = await startSubnetVM({ genesis, clock });
  try {
    await send(builder, { nonce: 0n, to: plainAddress(1) });
    await replay(verifier, (await buildAndAccept(builder)).bytes);
    await send(builder, { nonce: 1n, to: plainAddress(1) });
    const cheap = await builder.buildBlock();
    const foreign = await verifier.parseBlock(cheap.bytes);
    const e = await rejection(foreign.verify());
    assert.is(e.message, 'invalid block: insufficient gas (0) to cover the block cost (400000) at base fee (25000000000) (total block fee: 0)');
  } finally {
    await shutdown(builder, verifier);
  }
});

/** eth_getBlockByNumber("latest").blockGasCost through the VM's handler. */
async function latestBlockGasCost(vm: EvmVM): Promise<string> {
  const rpc = await serveRpc(vm);
  try {
    return (await rpc.ok('eth_getBlockByNumber', ['latest', false])).blockGasCost;
  } finally {
    await rpc.close();
  }
}

test('coinbase: allowFeeRecipients with a config.json feeRecipient gets base fee + tip; no gas refunds; without allowFeeRecipients the fees are burned', async () => {
  const recipient = plainAddress(0xfe);
  const clearer = plainAddress(0xc1);
  // PUSH0 PUSH0 SSTORE STOP: clears slot 0 (set to 1 in the genesis).
  const alloc = { [hex0x(clearer).slice(2)]: { balance: '0x0', code: '0x5f5f5500', storage: { [ZERO_WORD]: hex0x(uint256Word(1n)) } } };
  const genesis = subnetGenesis({ feeConfig: FAST_FEES, allowFeeRecipients: true }, alloc);
  const clock = manualClock(1000);
  const config = JSON.stringify({ feeRecipient: hex0x(recipient) });
  const vm = await startSubnetVM({ genesis, clock, config });
  const plain = await startSubnetVM({ genesis, clock });
  try {
    const h = await send(vm, { nonce: 0n, to: clearer, gas: 100_000n, tip: 2n * GWEI });
    const b = await buildAndAccept(vm);
    assert.is(hex0x(b.eth.header.coinbase.bytes), hex0x(recipient));
    const r = (await vm.backend.receipt(h))!;
    assert.is(r.status, 1);
    // 21,000 + 2 x PUSH0 + a cold SSTORE to zero (5,000): the 4,800 refund is not given.
    assert.is(r.gasUsed, 26_004n);
    assert.is(hex0x(await vm.backend.storageAt(clearer, new Uint8Array(32), 'latest')), ZERO_WORD);
    assert.is(await vm.backend.balance(recipient, 'latest'), 26_004n * 3n * GWEI);
    // Another node (its own recipient: the black hole) accepts any coinbase here.
    await replay(plain, b.bytes);
  } finally {
    await shutdown(vm, plain);
  }

  const burning = subnetGenesis({ feeConfig: FAST_FEES });
  const vm2 = await startSubnetVM({ genesis: burning, clock, config });
  try {
    await send(vm2, { nonce: 0n, to: plainAddress(1), tip: 2n * GWEI });
    const b = await buildAndAccept(vm2);
    assert.is(hex0x(b.eth.header.coinbase.bytes), hex0x(BLACKHOLE_ADDRESS));
    assert.is(await vm2.backend.balance(recipient, 'latest'), 0n);
    assert.is(await vm2.backend.balance(BLACKHOLE_ADDRESS, 'latest'), 21_000n * 3n * GWEI);
  } finally {
    await shutdown(vm2);
  }
});

test("reward manager: its stored reward address is the required coinbase (over allowFeeRecipients and feeRecipient); setRewardAddress, allowFeeRecipients and disableRewards move it", async () => {
  const reward = plainAddress(0xa1);
  const reward2 = plainAddress(0xa2);
  const recipient = plainAddress(0xfe);
  const genesis = subnetGenesis({
    feeConfig: FAST_FEES,
    allowFeeRecipients: true,
    rewardManagerConfig: { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], initialRewardConfig: { rewardAddress: hex0x(reward) } },
  });
  const clock = manualClock(1000);
  const vm = await startSubnetVM({ genesis, clock, config: JSON.stringify({ feeRecipient: hex0x(recipient) }) });
  const other = await startSubnetVM({ genesis, clock });
  let nonce = 0n;
  /** One block with one tx (a call to the reward manager, or a transfer); its coinbase. */
  const block = async (data?: Uint8Array) => {
    await send(vm, data ? { nonce: nonce++, to: REWARD_MANAGER_ADDRESS, data, gas: 100_000n } : { nonce: nonce++, to: plainAddress(1) });
    const b = await buildAndAccept(vm);
    return { b, coinbase: hex0x(b.eth.header.coinbase.bytes) };
  };
  try {
    const first = await block();
    assert.is(first.coinbase, hex0x(reward));
    const bad = await other.parseBlock(tampered(other, first.b, { coinbase: hex0x(recipient) }));
    assert.is(
      (await rejection(bad.verify())).message,
      `invalid block ${bad.id}: invalid coinbase: ${checksumAddress(recipient)} does not match required coinbase address ${checksumAddress(reward)}`,
    );
    await replay(other, first.b.bytes);

    // A setter's block is built on the state before it; the next block follows it.
    const steps: Array<[Uint8Array, Uint8Array]> = [
      [call('setRewardAddress(address)', addressWord(reward2)), reward2],
      [call('allowFeeRecipients()'), recipient],
      [call('disableRewards()'), BLACKHOLE_ADDRESS],
    ];
    let previous = reward;
    for (const [data, want] of steps) {
      const set = await block(data);
      assert.is(set.coinbase, hex0x(previous));
      await replay(other, set.b.bytes);
      const after = await block();
      assert.is(after.coinbase, hex0x(want));
      await replay(other, after.b.bytes);
      previous = want;
    }
  } finally {
    await shutdown(vm, other);
  }
});

test.run();
