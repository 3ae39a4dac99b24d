import { MemoryStore, utf8Encode, type KeyValueStore } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import type { EvmVMOptions } from '../src/index.js';
import { EvmVM } from '../src/chain-entry.js';
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

const OPS: Record<string, number> = {
  STOP: 0x00, EQ: 0x14, ISZERO: 0x15, SHL: 0x1b, SHR: 0x1c, CALLDATALOAD: 0x35, CALLDATASIZE: 0x36, CODECOPY: 0x39,
  MSTORE: 0x52, SLOAD: 0x54, SSTORE: 0x55, JUMPI: 0x57, JUMPDEST: 0x5b, PUSH0: 0x5f, DUP1: 0x80, LOG1: 0xa1, RETURN: 0xf3, REVERT: 0xfd,
};

/** A tiny assembler: opcodes, `0x..` push data (PUSHn chosen by length), `@label` (PUSH1 of a label), `label:`. */
export function asm(src: string): Uint8Array {
  const toks = src.split(/\s+/).filter(Boolean);
  const pass = (labels: Map<string, number>) => {
    const out: number[] = [];
    for (const t of toks) {
      if (t.endsWith(':')) {
        labels.set(t.slice(0, -1), out.length);
        out.push(OPS.JUMPDEST!);
      } else if (t.startsWith('@')) out.push(0x60, labels.get(t.slice(1)) ?? 0);
      else if (t.startsWith('0x')) {
        const b = Buffer.from(t.slice(2), 'hex');
        out.push(0x5f + b.length, ...b);
      } else {
        const op = OPS[t];
        if (op === undefined) throw new TypeError(`unknown op ${t}`);
        out.push(op);
      }
    }
    return Uint8Array.from(out);
  };
  const labels = new Map<string, number>();
  pass(labels);
  return pass(labels);
}

export const STORED_TOPIC = '0x' + 'aa'.repeat(32);

/**
 * A contract: no calldata -> returns slot 0; calldata starting 0xff -> reverts with Error("nope");
 * other calldata -> stores its first word in slot 0 and logs it with topic 0xaa..aa.
 */
export const RUNTIME = asm(`
  CALLDATASIZE ISZERO @get JUMPI
  PUSH0 CALLDATALOAD DUP1 0xf8 SHR 0xff EQ @revert JUMPI
  DUP1 PUSH0 SSTORE PUSH0 MSTORE ${STORED_TOPIC} 0x20 PUSH0 LOG1 STOP
  get: PUSH0 SLOAD PUSH0 MSTORE 0x20 PUSH0 RETURN
  revert: 0x08c379a0 0xe0 SHL PUSH0 MSTORE 0x20 0x04 MSTORE 0x04 0x24 MSTORE 0x${Buffer.from('nope').toString('hex')}${'00'.repeat(28)} 0x44 MSTORE 0x64 PUSH0 REVERT
`);

/** Init code that deploys RUNTIME. */
export const INIT = (() => {
  const len = RUNTIME.length.toString(16).padStart(2, '0');
  const head = asm(`0x${len} 0x0a PUSH0 CODECOPY 0x${len} PUSH0 RETURN`);
  if (head.length !== 10) throw new TypeError('init header must be 10 bytes');
  return Uint8Array.from([...head, ...RUNTIME]);
})();

export function word(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}
