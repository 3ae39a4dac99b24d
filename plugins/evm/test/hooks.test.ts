import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode, utf8Encode } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { EVMError } from '@ethereumjs/evm';
import { defineEvmVM, dynamicFeeRules, type EvmVMOptions, type FeeRules } from '../src/index.js';
import { EvmVM } from '../src/chain-entry.js';
import { EWOQ, GENESIS, GWEI, addr, buildAndAccept, hex, signedTx, startVM, word } from './helpers.js';

test('fee rules hook: base fee, gas limit and fee recipient come from the rules; base fee credited when asked', async () => {
  const recipient = addr(50);
  const rules: FeeRules = { ...dynamicFeeRules({ minBaseFee: 30n * GWEI, coinbase: recipient, tip: 2n * GWEI }), creditBaseFee: true };
  const vm = await startVM({ opts: { fees: () => rules } });
  try {
    assert.is(await vm.backend.gasPrice(), 32n * GWEI);
    assert.is(await vm.backend.maxPriorityFeePerGas(), 2n * GWEI);
    const h = await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n, tip: GWEI }).serialize());
    const b = await buildAndAccept(vm);
    assert.is(b.eth.header.baseFeePerGas, 30n * GWEI);
    assert.is(hex(b.eth.header.coinbase.bytes), hex(recipient));
    assert.is((await vm.backend.receipt(h))!.effectiveGasPrice, 31n * GWEI);
    // base fee (credited) + tip
    assert.is(await vm.backend.balance(recipient, 'latest'), 21_000n * 31n * GWEI);
    const fh = await vm.backend.feeHistory(2, 'latest', [50]);
    assert.equal(fh.baseFeePerGas.length, 3);
    assert.equal(fh.reward![1], [GWEI]);
  } finally {
    await vm.shutdown();
  }
});

test('custom precompile hook: a contract at a reserved address answers calls and txs', async () => {
  const at = '0x0200000000000000000000000000000000000001';
  const vm = await startVM({
    opts: {
      customPrecompiles: [
        {
          address: at as never,
          function: (input: { data: Uint8Array; gasLimit: bigint }) =>
            input.data[0] === 0xff
              ? { executionGasUsed: 100n, returnValue: new Uint8Array(), exceptionError: new EVMError(EVMError.errorMessages.REVERT) }
              : { executionGasUsed: 100n, returnValue: word(BigInt(input.data.length)) },
        },
      ],
    },
  });
  try {
    const to = Uint8Array.from(Buffer.from(at.slice(2), 'hex'));
    const r = await vm.backend.call({ to, data: new Uint8Array(5) }, 'latest');
    assert.is(hex(r.returnData), hex(word(5n)));
    assert.is((await vm.backend.call({ to, data: Uint8Array.of(0xff) }, 'latest')).error?.kind, 'revert');
    const h = await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to, data: new Uint8Array(3), gas: 30_000n }).serialize());
    await buildAndAccept(vm);
    assert.is((await vm.backend.receipt(h))!.status, 1);
  } finally {
    await vm.shutdown();
  }
});

test('chain config hook: parseConfig turns the config bytes into options; bad config fails initialize', async () => {
  const factory = defineEvmVM({
    name: 'subnetevm-test',
    options: {
      parseConfig: (bytes) => {
        const cfg = JSON.parse(new TextDecoder().decode(bytes)) as { minBaseFee?: string };
        return cfg.minBaseFee ? { fees: () => dynamicFeeRules({ minBaseFee: BigInt(cfg.minBaseFee!) }) } : {};
      },
    },
  });
  const vm = (await factory.create()) as EvmVM;
  await vm.initialize(testChainContext(), { genesis: GENESIS, config: utf8Encode(JSON.stringify({ minBaseFee: '40000000000' })) });
  try {
    assert.is(await vm.backend.gasPrice(), 40n * GWEI);
  } finally {
    await vm.shutdown();
  }
  const plain = new EvmVM();
  try {
    await plain.initialize(testChainContext(), { genesis: GENESIS, config: utf8Encode('[1]') });
    assert.unreachable('a config that is not an object must fail');
  } catch (e) {
    assert.ok(hasErrorCode(e, 'InvalidConfig'), String(e));
  }
});

test('options out of range (from code or a parseConfig hook) fail initialize, naming the option', async () => {
  const cases: [EvmVMOptions, RegExp][] = [
    [{ rpcEvmTimeoutMs: -1 }, /invalid chain option rpcEvmTimeoutMs: must be a whole number >= 0, got -1/],
    [{ rpcEvmTimeoutMs: Number.NaN }, /rpcEvmTimeoutMs: .* got NaN/],
    [{ maxBlockTxs: 0 }, /maxBlockTxs: must be a whole number >= 1/],
    [{ receiptWaitMs: 1.5 }, /receiptWaitMs/],
    [{ rpcGasCap: 0n }, /invalid chain option rpcGasCap: must be a bigint > 0, got 0/],
    [{ parseConfig: () => ({ maxTxBytes: -5 }) }, /maxTxBytes: .* got -5/],
  ];
  for (const [opts, want] of cases) {
    const vm = new EvmVM(opts);
    const err = await vm.initialize(testChainContext(), { genesis: GENESIS, config: utf8Encode('{}') }).then(() => undefined, (e: unknown) => e);
    assert.ok(hasErrorCode(err, 'InvalidConfig'), String(err));
    assert.match(String((err as Error).message), want);
  }
  const ok = await startVM({ opts: { rpcEvmTimeoutMs: 0, receiptWaitMs: 0, rpcGasCap: 1n } });
  await ok.shutdown();
});

test('extra RPC methods hook: made from the backend and handed to the RPC factory', async () => {
  let made: ReadonlyMap<string, unknown> | undefined;
  const vm = await startVM({
    opts: {
      extraMethods: (backend) => {
        made = new Map([['eth_feeConfig', async () => ({ gasLimit: String(backend.blockNumber()) })]]);
        return made as never;
      },
    },
  });
  try {
    // The RPC layer (src/rpc) is built by another helper; until it lands, createEthRpc throws and
    // the hook is observed through what the VM built for it.
    await vm.createHandlers().catch(() => undefined);
    assert.ok(made?.has('eth_feeConfig'));
    assert.equal(await (made!.get('eth_feeConfig') as () => Promise<unknown>)(), { gasLimit: '0' });
    assert.is(await vm.backend.balance(EWOQ, 'latest') > 0n, true);
  } finally {
    await vm.shutdown();
  }
});

test.run();
