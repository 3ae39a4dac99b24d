import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode, MemoryStore, utf8Encode } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { createBlock } from '@ethereumjs/block';
import { Address, bytesToBigInt, createContractAddress } from '@ethereumjs/util';
import { EvmChainError, EvmRpcError, type ChainRules, type ChainRulesFactory, type EvmGenesis, type EvmVMOptions, type PrecompileResult } from '../src/index.js';
import { EvmVM } from '../src/chain-entry.js';
import { makeVM, stateManagerAt } from '../src/chain/executor.js';
import { dynamicFeeRules } from '../src/chain/fees.js';
import { StateDB } from '../src/chain/state/state-db.js';
import { blockJson } from '../src/rpc/format.js';
import { EWOQ, GWEI, INIT, addr, buildAndAccept, common, genesisJson, hex, key, signedTx, startVM, word } from './helpers.js';

const bytes = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
/** The toy stateful precompile, active from genesis (beforeBlock gives it nonce 1 and code 0x01). */
const PRE = bytes('0300000000000000000000000000000000000001');
/** A precompile that is never active. */
const OFF = bytes('0300000000000000000000000000000000000002');
/** beforeBlock writes block number + 100 here, at PRE; the header rule reads it on the parent's state. */
const MARK = word(9n);
const COINBASE = addr(60);
/** Before this second, a block of tip-less txs fails the block-fee check (buildableAt answers it). */
const T = 1000n;
const EXTRA_BYTES = 36;
/** A contract that STATICCALLs PRE and returns its 64-byte answer. */
const STATIC_CALLER = bytes('00000000000000000000000000000000000c0de1');
const STATIC_CALLER_CODE = Uint8Array.from([0x60, 0x40, 0x5f, 0x5f, 0x5f, 0x73, ...PRE, 0x5a, 0xfa, 0x50, 0x60, 0x40, 0x5f, 0xf3]);
/** A contract that CREATEs an empty contract and stores the result (0 when refused) in slot 0. */
const CREATOR = bytes('00000000000000000000000000000000000c0de2');
const CREATOR_CODE = Uint8Array.from([0x5f, 0x5f, 0x5f, 0xf0, 0x5f, 0x55, 0x00]);
const REFUSED_SENDER = 7;
const REFUSED_DEPLOYER = 8;

interface Toy {
  refusedSenders: Set<string>;
  checkFee: boolean;
  /** How many times the rules computed header fields. */
  headerCalls?: number;
  /** How many times the rules answered buildableAt. */
  buildableCalls?: number;
  made?: { genesis: EvmGenesis; upgrade: string };
}

function toyRules(toy: Toy): ChainRulesFactory {
  return (genesis, upgrade) => {
    toy.made = { genesis, upgrade: Buffer.from(upgrade).toString() };
    const rules: ChainRules = {
      async header(parent, _timestamp, state) {
        toy.headerCalls = (toy.headerCalls ?? 0) + 1;
        const mark = bytesToBigInt(await state.getStorage(PRE, MARK));
        return { baseFeePerGas: 27n * GWEI + mark, gasLimit: parent.gasLimit, coinbase: COINBASE, extraData: new Uint8Array(EXTRA_BYTES).fill(Number((parent.number + 1n) & 0xffn)) };
      },
      maxExtraDataBytes: 40,
      async beforeBlock(block, state) {
        if (block.parentTimestamp === undefined) {
          await state.putAccount(PRE, { nonce: 1n, balance: 0n });
          await state.putCode(PRE, Uint8Array.of(1));
        }
        await state.putStorage(PRE, MARK, word(block.number + 100n));
      },
      async checkTx(sender) {
        return toy.refusedSenders.has(hex(sender)) ? `toy: sender ${hex(sender)} is not allowed` : undefined;
      },
      async canCreate(origin) {
        return hex(origin) === hex(addr(REFUSED_DEPLOYER)) ? `toy: ${hex(origin)} cannot deploy` : undefined;
      },
      precompiles: [
        {
          address: PRE,
          async run(call): Promise<PrecompileResult> {
            if (call.input[0] === 1) return { ok: false, error: 'toy: refused' };
            if (call.input[0] === 2) return { ok: false, error: "toy: reverted", revert: true, output: Uint8Array.of(0xab, 0xcd), gasUsed: 100n };
            if (!call.isStatic) {
              await call.state.putStorage(PRE, word(0n), word(bytesToBigInt(call.caller)));
              await call.state.putStorage(PRE, word(1n), word(call.block.parentTimestamp ?? 999n));
            }
            const out = new Uint8Array(64);
            out.set(word(bytesToBigInt(call.caller)));
            out.set(word(call.isStatic ? 1n : 0n), 32);
            return { ok: true, output: out, gasUsed: 5000n, logs: [{ topics: [word(0xaan)], data: Uint8Array.of(1) }] };
          },
        },
        { address: OFF, isActive: () => false, run: async () => ({ ok: false, error: 'toy: must not run' }) },
      ],
      verifyBlockFee(header, txs) {
        if (!toy.checkFee || header.timestamp >= T || txs.some((t) => t.tipPerGas > 0n)) return undefined;
        return 'toy: tips do not pay the block gas cost';
      },
      async buildableAt() {
        toy.buildableCalls = (toy.buildableCalls ?? 0) + 1;
        return toy.checkFee ? T : undefined;
      },
      creditBaseFee: true,
      headerJson: (h) => ({ toyNumber: `0x${h.number.toString(16)}` }),
    };
    return rules;
  };
}

const GENESIS = utf8Encode(
  JSON.stringify(
    genesisJson({
      [hex(addr(REFUSED_SENDER)).slice(2)]: { balance: '0x' + (10n ** 21n).toString(16) },
      [hex(addr(REFUSED_DEPLOYER)).slice(2)]: { balance: '0x' + (10n ** 21n).toString(16) },
      [hex(STATIC_CALLER).slice(2)]: { balance: '0x0', code: hex(STATIC_CALLER_CODE) },
      [hex(CREATOR).slice(2)]: { balance: '0x0', code: hex(CREATOR_CODE) },
    }),
  ),
);

function newToy(o: Partial<Toy> = {}): Toy {
  return { refusedSenders: new Set(), checkFee: true, ...o };
}

/** A clock in ms the test moves (2,000 s: past T). */
function clock(startS = 2000) {
  const c = { ms: startS * 1000, now: () => c.ms };
  return c;
}

async function toyVM(toy: Toy, c = clock(), opts: EvmVMOptions = {}): Promise<EvmVM> {
  return startVM({ genesis: GENESIS, opts: { rules: toyRules(toy), ...opts }, now: c.now, db: new MemoryStore() });
}

async function rejects(p: Promise<unknown>, text: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.match((e as Error).message, text);
    return;
  }
  assert.unreachable(`expected ${text}`);
}

async function rpcRejects(p: Promise<unknown>, code: number, text: string | RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, EvmRpcError);
    assert.is((e as EvmRpcError).rpcCode, code);
    if (typeof text === 'string') assert.is((e as Error).message, text);
    else assert.match((e as Error).message, text);
    return;
  }
  assert.unreachable(`expected ${text}`);
}

test('rules factory: gets the genesis and the upgrade bytes; its error fails initialize (typed kept, others InvalidConfig)', async () => {
  const toy = newToy();
  const vm = new EvmVM({ rules: toyRules(toy) });
  await vm.initialize(testChainContext(), { genesis: GENESIS, upgrade: utf8Encode('{"precompileUpgrades":[]}') });
  await vm.shutdown();
  assert.is(toy.made?.upgrade, '{"precompileUpgrades":[]}');
  assert.is(toy.made?.genesis.chainId, 43110n);
  const noUpgrade = newToy();
  const vm2 = new EvmVM({ rules: toyRules(noUpgrade) });
  await vm2.initialize(testChainContext(), { genesis: GENESIS });
  await vm2.shutdown();
  assert.is(noUpgrade.made?.upgrade, '');
  for (const [thrown, code, message] of [
    [new EvmChainError('InvalidGenesis', 'invalid genesis: config.feeConfig.gasLimit: must be > 0'), 'InvalidGenesis', 'invalid genesis: config.feeConfig.gasLimit: must be > 0'],
    [new TypeError('boom'), 'InvalidConfig', 'invalid chain rules config: boom'],
  ] as const) {
    const bad = new EvmVM({ rules: () => { throw thrown; } });
    try {
      await bad.initialize(testChainContext(), { genesis: GENESIS });
      assert.unreachable('initialize must fail');
    } catch (e) {
      assert.ok(hasErrorCode(e, code), String(e));
      assert.is((e as Error).message, message);
    }
  }
});

test('genesis: beforeBlock runs after the alloc with no parent time (precompile account, marker)', async () => {
  const vm = await toyVM(newToy());
  try {
    assert.is(hex(await vm.backend.code(PRE, 'latest')), '0x01');
    assert.is(await vm.backend.nonce(PRE, 'latest'), 1n);
    assert.is(hex(await vm.backend.storageAt(PRE, MARK, 'latest')), hex(word(100n)));
  } finally {
    await vm.shutdown();
  }
});

test('build: header fields from the rules on the parent state, beforeBlock marker, base fee credited, headerJson extras, gas price', async () => {
  const vm = await toyVM(newToy());
  try {
    assert.is(await vm.backend.gasPrice(), 27n * GWEI + 100n);
    const h = await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n, tip: GWEI }).serialize());
    const b1 = await buildAndAccept(vm);
    assert.is(b1.eth.header.baseFeePerGas, 27n * GWEI + 100n);
    assert.is(hex(b1.eth.header.coinbase.bytes), hex(COINBASE));
    assert.is(hex(b1.eth.header.extraData), hex(new Uint8Array(EXTRA_BYTES).fill(1)));
    assert.is(hex(await vm.backend.storageAt(PRE, MARK, 'latest')), hex(word(101n)));
    // Base fee (credited: creditBaseFee) + tip.
    const price = (await vm.backend.receipt(h))!.effectiveGasPrice;
    assert.is(price, 28n * GWEI + 100n);
    assert.is(await vm.backend.balance(COINBASE, 'latest'), 21_000n * price);
    assert.is(await vm.backend.gasPrice(), 27n * GWEI + 101n);
    const json = blockJson((await vm.backend.block('latest'))!, false);
    assert.is(json.toyNumber, '0x1');
    assert.is(json.extraData, hex(new Uint8Array(EXTRA_BYTES).fill(1)));
    const fh = await vm.backend.feeHistory(1, 'latest', []);
    assert.equal(fh.baseFeePerGas, [27n * GWEI + 100n, 27n * GWEI + 101n]);
    await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: addr(1), value: 1n, tip: GWEI }).serialize());
    const b2 = await buildAndAccept(vm);
    assert.is(b2.eth.header.baseFeePerGas, 27n * GWEI + 101n);
  } finally {
    await vm.shutdown();
  }
});

test('header: asked once per parent and second (admissions and the build on the same tip share it); a new parent or second asks again', async () => {
  const toy = newToy();
  const c = clock();
  const vm = await toyVM(toy, c);
  try {
    const before = toy.headerCalls ?? 0;
    for (let n = 0n; n < 5n; n++) await vm.backend.sendRawTransaction(signedTx({ nonce: n, to: addr(1), value: 1n, tip: GWEI }).serialize());
    assert.is(await vm.backend.gasPrice(), 27n * GWEI + 100n);
    const b1 = await buildAndAccept(vm);
    assert.is(b1.eth.transactions.length, 5);
    assert.is(toy.headerCalls! - before, 1, 'five admissions, a gas price and the build: one computation');
    assert.is(await vm.backend.gasPrice(), 27n * GWEI + 101n, 'on the new tip: its state');
    assert.is(toy.headerCalls! - before, 2);
    c.ms += 1000;
    assert.is(await vm.backend.gasPrice(), 27n * GWEI + 101n);
    assert.is(toy.headerCalls! - before, 3, 'the next second asks again');
  } finally {
    await vm.shutdown();
  }
});

test('checkTx: refused at admission (-32000, the rules text) and left out of a block being built', async () => {
  const toy = newToy();
  const vm = await toyVM(toy);
  const refused = hex(addr(REFUSED_SENDER));
  try {
    toy.refusedSenders.add(refused);
    await rpcRejects(vm.backend.sendRawTransaction(signedTx({ key: key(REFUSED_SENDER), nonce: 0n, to: addr(1) }).serialize()), -32000, `toy: sender ${refused} is not allowed`);
    toy.refusedSenders.clear();
    const pooled = await vm.backend.sendRawTransaction(signedTx({ key: key(REFUSED_SENDER), nonce: 0n, to: addr(1) }).serialize());
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1) }).serialize());
    toy.refusedSenders.add(refused);
    const b = await buildAndAccept(vm);
    assert.is(b.eth.transactions.length, 1);
    assert.is(hex(b.execution!.senders[0]!), hex(EWOQ));
    assert.is(vm.chain.mempool.get(Buffer.from(pooled).toString('hex')), undefined);
  } finally {
    await vm.shutdown();
  }
});

test('canCreate: a refused deploy tx fails using all its gas; a nested CREATE is refused by tx.origin; eth_call and estimateGas give the text', async () => {
  const vm = await toyVM(newToy());
  const deployer = addr(REFUSED_DEPLOYER);
  try {
    const refusedTx = await vm.backend.sendRawTransaction(signedTx({ key: key(REFUSED_DEPLOYER), nonce: 0n, data: INIT, gas: 200_000n }).serialize());
    const okTx = await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, data: INIT, gas: 200_000n }).serialize());
    await buildAndAccept(vm);
    const r = (await vm.backend.receipt(refusedTx))!;
    assert.is(r.status, 0);
    assert.is(r.gasUsed, 200_000n);
    assert.is(hex(await vm.backend.code(createContractAddress(new Address(deployer), 0n).bytes, 'latest')), '0x');
    assert.is((await vm.backend.receipt(okTx))!.status, 1);
    // Nested: CREATOR's CREATE answers 0 when the tx's origin may not deploy (the refused frame used
    // its 63/64 of the gas; CREATOR's nonce moved, as with libevm's hook after the nonce bump).
    const nested = await vm.backend.sendRawTransaction(signedTx({ key: key(REFUSED_DEPLOYER), nonce: 1n, to: CREATOR, gas: 1_000_000n }).serialize());
    await buildAndAccept(vm);
    const n = (await vm.backend.receipt(nested))!;
    assert.is(n.status, 1);
    assert.ok(n.gasUsed > 900_000n, String(n.gasUsed));
    assert.is(hex(await vm.backend.storageAt(CREATOR, word(0n), 'latest')), hex(word(0n)));
    await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: CREATOR, gas: 1_000_000n }).serialize());
    await buildAndAccept(vm);
    assert.is(hex(await vm.backend.storageAt(CREATOR, word(0n), 'latest')), hex(word(bytesToBigInt(createContractAddress(new Address(CREATOR), 1n).bytes))));
    const call = await vm.backend.call({ from: deployer, data: INIT }, 'latest');
    assert.equal(call.error, { kind: 'error', message: `toy: ${hex(deployer)} cannot deploy` });
    await rpcRejects(vm.backend.estimateGas({ from: deployer, data: INIT }, 'latest'), -32000, `toy: ${hex(deployer)} cannot deploy`);
    assert.ok((await vm.backend.estimateGas({ from: EWOQ, data: INIT }, 'latest')) > 53_000n);
  } finally {
    await vm.shutdown();
  }
});

test('stateful precompile: caller, isStatic, block info and journaled state; revert, halt and inactive answers; in txs and eth_call', async () => {
  const vm = await toyVM(newToy());
  try {
    const h = await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: PRE, data: Uint8Array.of(0), gas: 100_000n }).serialize());
    const failed = await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: PRE, data: Uint8Array.of(1), gas: 100_000n }).serialize());
    await buildAndAccept(vm);
    const r = (await vm.backend.receipt(h))!;
    assert.is(r.status, 1);
    assert.is(r.gasUsed, 21_000n + 4n + 5000n);
    assert.is(r.logs.length, 1);
    assert.is(hex(r.logs[0]!.address), hex(PRE));
    assert.is(hex(await vm.backend.storageAt(PRE, word(0n), 'latest')), hex(word(bytesToBigInt(EWOQ))));
    // The block's parent time: the genesis' (0).
    assert.is(hex(await vm.backend.storageAt(PRE, word(1n), 'latest')), hex(word(0n)));
    const f = (await vm.backend.receipt(failed))!;
    assert.is(f.status, 0);
    assert.is(f.gasUsed, 100_000n);

    const direct = await vm.backend.call({ from: addr(3), to: PRE, data: Uint8Array.of(0) }, 'latest');
    assert.is(direct.error, undefined);
    assert.is(hex(direct.returnData.subarray(0, 32)), hex(word(bytesToBigInt(addr(3)))));
    assert.is(hex(direct.returnData.subarray(32)), hex(word(0n)));
    // Through a STATICCALL: the caller is the contract and the frame is static.
    const viaStatic = await vm.backend.call({ from: addr(3), to: STATIC_CALLER }, 'latest');
    assert.is(hex(viaStatic.returnData.subarray(0, 32)), hex(word(bytesToBigInt(STATIC_CALLER))));
    assert.is(hex(viaStatic.returnData.subarray(32)), hex(word(1n)));
    // The call's writes were reverted with it.
    assert.is(hex(await vm.backend.storageAt(PRE, word(0n), 'latest')), hex(word(bytesToBigInt(EWOQ))));

    assert.equal(await vm.backend.call({ to: PRE, data: Uint8Array.of(1) }, 'latest'), { returnData: new Uint8Array(), gasUsed: 50_000_000n, error: { kind: 'error', message: 'toy: refused' } });
    const reverted = await vm.backend.call({ to: PRE, data: Uint8Array.of(2) }, 'latest');
    assert.is(reverted.error?.kind, 'revert');
    assert.is(hex(reverted.returnData), '0xabcd');
    await rpcRejects(vm.backend.estimateGas({ to: PRE, data: Uint8Array.of(1) }, 'latest'), -32000, 'toy: refused');
    await rpcRejects(vm.backend.estimateGas({ to: PRE, data: Uint8Array.of(2) }, 'latest'), 3, 'execution reverted');
    const estimate = await vm.backend.estimateGas({ to: PRE, data: Uint8Array.of(0) }, 'latest');
    assert.ok(estimate >= 26_004n && estimate * 1000n <= 26_004n * 1015n, String(estimate));

    const off = await vm.backend.call({ to: OFF, data: Uint8Array.of(1) }, 'latest');
    assert.equal(off, { returnData: new Uint8Array(), gasUsed: 0n });
  } finally {
    await vm.shutdown();
  }
});

test('stateful precompile on a shallow copy of the VM: the frame stack and the VM params are installed again', async () => {
  const toy = newToy();
  const rules = toyRules(toy)({} as EvmGenesis, new Uint8Array());
  const db = new StateDB(new MemoryStore());
  const sm = await stateManagerAt(common, db, undefined, 100);
  const vm = await makeVM(common, sm, { fees: dynamicFeeRules(), rules, vmParams: { 3529: { maxRefundQuotient: 2 ** 52 } } }, async () => undefined);
  const copy = await vm.shallowCopy();
  assert.is(copy.common.param('maxRefundQuotient'), 2n ** 52n);
  const res = await copy.evm.runCall({ caller: new Address(addr(4)), to: new Address(PRE), data: Uint8Array.of(0), gasLimit: 100_000n, isStatic: true });
  assert.is(res.execResult.exceptionError, undefined);
  assert.is(hex(res.execResult.returnValue.subarray(0, 32)), hex(word(bytesToBigInt(addr(4)))));
  assert.is(hex(res.execResult.returnValue.subarray(32)), hex(word(1n)));
});

test('replay on another VM: the same rules accept the block with the same state root; a header, a refused sender or the block fee make it invalid', async () => {
  // Before T; the builder does not check the block fee (its txs pay a tip anyway, until the last block).
  const c = clock(500);
  const toyA = newToy({ checkFee: false });
  const toyB = newToy();
  const a = await toyVM(toyA, c);
  const b = await toyVM(toyB, c);
  try {
    await a.backend.sendRawTransaction(signedTx({ nonce: 0n, to: PRE, data: Uint8Array.of(0), gas: 100_000n, tip: 1n }).serialize());
    await a.backend.sendRawTransaction(signedTx({ nonce: 1n, to: CREATOR, gas: 200_000n, tip: 1n }).serialize());
    await a.backend.sendRawTransaction(signedTx({ key: key(REFUSED_DEPLOYER), nonce: 0n, data: INIT, gas: 200_000n, tip: 1n }).serialize());
    await a.backend.sendRawTransaction(signedTx({ key: key(REFUSED_SENDER), nonce: 0n, to: addr(1), value: 5n, tip: 1n }).serialize());
    const built = await a.buildBlock();
    assert.is(built.eth.transactions.length, 4);

    // A tampered header (extraData) is refused on the parent's state.
    const h = built.eth.header.toJSON();
    const tampered = createBlock({ header: { ...h, extraData: hex(new Uint8Array(EXTRA_BYTES)) } as never, transactions: built.eth.transactions }, { common: b.chain.txCommon, skipConsensusFormatValidation: true });
    const t = await b.parseBlock(tampered.serialize());
    await rejects(t.verify(), /invalid block .*: extra data does not follow the chain rules/);
    const longer = createBlock({ header: { ...h, extraData: hex(new Uint8Array(41)) } as never, transactions: built.eth.transactions }, { common: b.chain.txCommon, skipConsensusFormatValidation: true });
    await rejects((await b.parseBlock(longer.serialize())).verify(), /extra data is longer than 40 bytes/);

    // B refuses one of its senders: the block is invalid.
    toyB.refusedSenders.add(hex(addr(REFUSED_SENDER)));
    await rejects((await b.parseBlock(built.bytes)).verify(), /invalid block: tx 3 is refused: toy: sender 0x[0-9a-f]{40} is not allowed/);
    toyB.refusedSenders.clear();

    const replayed = await b.parseBlock(built.bytes);
    await replayed.verify();
    await built.verify();
    for (const [vm, blk] of [[a, built], [b, replayed]] as const) {
      await vm.setPreference(blk.id);
      await blk.accept();
    }
    assert.is(hex(b.chain.lastAccepted.eth.header.stateRoot), hex(a.chain.lastAccepted.eth.header.stateRoot));
    assert.is(hex(await b.backend.storageAt(PRE, MARK, 'latest')), hex(word(101n)));

    // A tip-less block built before T by a builder that does not check the block fee: B refuses it.
    await a.backend.sendRawTransaction(signedTx({ nonce: 2n, to: addr(1), value: 1n }).serialize());
    const cheap = await a.buildBlock();
    await rejects((await b.parseBlock(cheap.bytes)).verify(), /invalid block: toy: tips do not pay the block gas cost/);
  } finally {
    await a.shutdown();
    await b.shutdown();
  }
});

test('block fee and buildableAt: a tip-less block before T is not proposed and waitForEvent waits for T; a tip pays for it', async () => {
  const c = clock(500);
  const vm = await toyVM(newToy(), c);
  try {
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    try {
      await vm.buildBlock();
      assert.unreachable('the block fails the block-fee check');
    } catch (e) {
      assert.ok(hasErrorCode(e, 'NothingToBuild'), String(e));
      assert.match((e as Error).message, /block-fee check: toy: tips do not pay the block gas cost/);
    }
    assert.is(vm.chain.mempool.candidates(new Map(), 10).length, 1);
    const ac = new AbortController();
    let event: string | undefined;
    const waiting = vm.waitForEvent(ac.signal).then((e) => (event = e));
    await new Promise((r) => setTimeout(r, 50));
    assert.is(event, undefined);
    c.ms = Number(T) * 1000;
    vm.chain.wake();
    await waiting;
    assert.is(event, 'pendingTxs');
    const b = await buildAndAccept(vm);
    assert.is(b.eth.header.timestamp, T);

    // Before T again (a later parent is at T, so a block is at T too: use a tip instead).
    await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: addr(1), value: 1n, tip: 1n }).serialize());
    assert.is((await buildAndAccept(vm)).eth.transactions.length, 1);
  } finally {
    await vm.shutdown();
  }
});

test('buildableAt is asked once per preferred block, however often waitForEvent checks', async () => {
  const c = clock(500);
  const toy = newToy();
  const vm = await toyVM(toy, c);
  const turn = () => new Promise((r) => setTimeout(r, 5));
  try {
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    const ac = new AbortController();
    let event: string | undefined;
    const waiting = vm.waitForEvent(ac.signal).then((e) => (event = e));
    for (let i = 0; i < 5; i++) {
      vm.chain.wake();
      await turn();
    }
    await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: addr(1), value: 1n }).serialize());
    await turn();
    assert.is(event, undefined);
    assert.is(toy.buildableCalls, 1);
    c.ms = Number(T) * 1000;
    vm.chain.wake();
    await waiting;
    assert.is(event, 'pendingTxs');
    await buildAndAccept(vm);
    // A new preferred block: asked again on its state.
    await vm.backend.sendRawTransaction(signedTx({ nonce: 2n, to: addr(1), value: 1n }).serialize());
    await vm.waitForEvent(ac.signal);
    assert.is(toy.buildableCalls, 2);
  } finally {
    await vm.shutdown();
  }
});

test('no rules: the C-Chain header and errors are unchanged (32-byte extraData limit, fee-rule texts)', async () => {
  const a = await startVM();
  const b = await startVM();
  try {
    await a.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    const built = await a.buildBlock();
    const h = built.eth.header.toJSON();
    const long = createBlock({ header: { ...h, extraData: hex(new Uint8Array(33)) } as never, transactions: built.eth.transactions }, { common: b.chain.txCommon, skipConsensusFormatValidation: true });
    await rejects(b.parseBlock(long.serialize()), /not an Ethereum block of this chain: .*cannot exceed 32 bytes/);
    const fee = createBlock({ header: { ...h, baseFeePerGas: '0x1' } as never, transactions: built.eth.transactions }, { common: b.chain.txCommon, skipConsensusFormatValidation: true });
    await rejects((await b.parseBlock(fee.serialize())).verify(), /base fee does not follow the fee rules/);
    const json = blockJson((await a.backend.block('latest'))!, false);
    assert.is('toyNumber' in json, false);
  } finally {
    await a.shutdown();
    await b.shutdown();
  }
});

test.run();
