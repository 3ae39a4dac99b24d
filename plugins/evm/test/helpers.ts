import { MemoryStore, utf8Encode, type KeyValueStore } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { EvmVM, type EvmVMOptions } from '../src/index.js';
import { chainCommon } from '../src/chain/executor.js';
import { addressOfKey } from '../src/chain/crypto.js';

export const EWOQ_KEY = Uint8Array.from(Buffer.from('56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027', 'hex'));
export const EWOQ = Uint8Array.from(Buffer.from('8db97c7cece249c2b98bdc0226cc4c2a57bf52fc', 'hex'));
export const CHAIN_ID = 43110n;
export const GWEI = 1_000_000_000n;

/** The local C-Chain genesis (core/src/genesis/local.ts LOCAL_C_CHAIN_GENESIS), with extra allocations. */
export function genesisJson(extraAlloc: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    config: {
      chainId: 43110,
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      shanghaiTime: 0,
      cancunTime: 0,
    },
    nonce: '0x0',
    timestamp: '0x0',
    extraData: '0x00',
    gasLimit: '0x5f5e100',
    difficulty: '0x0',
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    alloc: { '8db97c7cece249c2b98bdc0226cc4c2a57bf52fc': { balance: '0x33b2e3c9fd0803ce8000000' }, ...extraAlloc },
    number: '0x0',
    gasUsed: '0x0',
    parentHash: `0x${'00'.repeat(32)}`,
  };
}

export const GENESIS = utf8Encode(JSON.stringify(genesisJson()));

export const common = chainCommon(CHAIN_ID);

export function key(n: number): Uint8Array {
  const k = new Uint8Array(32);
  k[31] = n;
  k[0] = 1;
  return k;
}

export function addr(n: number): Uint8Array {
  return addressOfKey(key(n));
}

/** A signed EIP-1559 tx. */
export function signedTx(o: { key?: Uint8Array; nonce: bigint; to?: Uint8Array; value?: bigint; data?: Uint8Array; gas?: bigint; maxFee?: bigint; tip?: bigint; chainId?: bigint }): TypedTransaction {
  const tx = createTx(
    {
      type: 2,
      chainId: o.chainId ?? CHAIN_ID,
      nonce: o.nonce,
      ...(o.to ? { to: o.to } : {}),
      value: o.value ?? 0n,
      data: o.data ?? new Uint8Array(),
      gasLimit: o.gas ?? 21_000n,
      maxFeePerGas: o.maxFee ?? 50n * GWEI,
      maxPriorityFeePerGas: o.tip ?? 0n,
    },
    { common: o.chainId && o.chainId !== CHAIN_ID ? chainCommon(o.chainId) : common },
  );
  return tx.sign(o.key ?? EWOQ_KEY) as TypedTransaction;
}

export async function startVM(o: { db?: KeyValueStore; genesis?: Uint8Array; opts?: EvmVMOptions; now?: () => number } = {}): Promise<EvmVM> {
  const vm = new EvmVM(o.opts);
  await vm.initialize(testChainContext({ db: o.db ?? new MemoryStore(), ...(o.now ? { clock: { now: o.now } } : {}) }), { genesis: o.genesis ?? GENESIS });
  await vm.setState('bootstrapping');
  await vm.setState('normalOp');
  return vm;
}

/** Builds, verifies, prefers and accepts one block from what is pending. */
export async function buildAndAccept(vm: EvmVM) {
  const b = await vm.buildBlock();
  await b.verify();
  await vm.setPreference(b.id);
  await b.accept();
  return b;
}

export function hex(b: Uint8Array): string {
  return `0x${Buffer.from(b).toString('hex')}`;
}
