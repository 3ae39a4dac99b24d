/**
 * Helpers for the tests that run real EvmVMs with the subnet-EVM's options (subnetEvmOptions): a
 * genesis builder, a VM on a MemoryStore with an injected clock, signed txs, ABI call data, block
 * tampering, and the VM's JSON-RPC handler served on loopback.
 */
import { createServer, type Server } from 'node:http';
import { MemoryStore, utf8Encode, type KeyValueStore } from '@cornice/sdk';
import { postRpc, testChainContext, type RpcReply } from '@cornice/core/testing';
import { EvmVM, type EvmBlock } from '@cornice/evm/chain';
import type { EvmVMOptions } from '@cornice/evm';
import { createBlock } from '@ethereumjs/block';
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import * as assert from 'uvu/assert';
import { hex0x, subnetEvmOptions } from '../src/index.js';

export const GWEI = 1_000_000_000n;
export const CHAIN_ID = 99999;

export function key(n: number): Uint8Array {
  const k = new Uint8Array(32);
  k[0] = 1;
  k[31] = n;
  return k;
}

export const addressOf = (k: Uint8Array): Uint8Array => privateToAddress(k);
export const ADMIN_KEY = key(1);
export const ADMIN = addressOf(ADMIN_KEY);
/** A 20-byte address whose last byte is `n`. */
export const plainAddress = (n: number): Uint8Array => Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? n : 0));

/** A fee config with no block gas cost (blocks may follow each other at once, tip-less). */
export const FAST_FEES = {
  gasLimit: 20_000_000,
  targetBlockRate: 2,
  minBaseFee: 1_000_000_000,
  targetGas: 100_000_000,
  baseFeeChangeDenominator: 48,
  minBlockGasCost: 0,
  maxBlockGasCost: 0,
  blockGasCostStep: 0,
};

/** A subnet-EVM genesis at time 0: `config` extends `{ chainId }` (no feeConfig: the default one); ADMIN is funded. */
export function subnetGenesis(config: Record<string, unknown> = {}, alloc: Record<string, unknown> = {}): Uint8Array {
  return utf8Encode(
    JSON.stringify({
      config: { chainId: CHAIN_ID, ...config },
      alloc: { [hex0x(ADMIN).slice(2)]: { balance: '0x' + (10n ** 27n).toString(16) }, ...alloc },
      // The other header fields take parseGenesis' defaults (zero; time 0).
      gasLimit: '0x1312d00',
    }),
  );
}

/** A clock in ms that the test moves. */
export function manualClock(startSeconds: number) {
  const c = { ms: startSeconds * 1000, now: () => c.ms, at: (s: number) => void (c.ms = s * 1000) };
  return c;
}

export interface StartOptions {
  genesis: Uint8Array;
  clock: { now(): number };
  upgrade?: string;
  config?: string;
  db?: KeyValueStore;
  opts?: EvmVMOptions;
  /** ChainContext.debugApis: as a node started with --evm-debug-api (default false). */
  debugApis?: boolean;
}

/** A subnet-EVM VM (subnetEvmOptions unless `opts`) in normal operation. */
export async function startSubnetVM(o: StartOptions): Promise<EvmVM> {
  const vm = new EvmVM(o.opts ?? subnetEvmOptions);
  await vm.initialize(testChainContext({ db: o.db ?? new MemoryStore(), clock: o.clock, debugApis: o.debugApis ?? false }), {
    genesis: o.genesis,
    ...(o.upgrade !== undefined ? { upgrade: utf8Encode(o.upgrade) } : {}),
    ...(o.config !== undefined ? { config: utf8Encode(o.config) } : {}),
  });
  await vm.setState('bootstrapping');
  await vm.setState('normalOp');
  return vm;
}

/** A signed EIP-1559 tx of this chain (21,000 gas, no tip, 1,000 gwei fee cap unless said). */
export function signedTx(
  vm: EvmVM,
  o: { key?: Uint8Array; nonce: bigint; to?: Uint8Array; value?: bigint; data?: Uint8Array; gas?: bigint; maxFee?: bigint; tip?: bigint },
): TypedTransaction {
  const tx = createTx(
    {
      type: 2,
      chainId: BigInt(CHAIN_ID),
      nonce: o.nonce,
      ...(o.to ? { to: o.to } : {}),
      value: o.value ?? 0n,
      data: o.data ?? new Uint8Array(),
      gasLimit: o.gas ?? 21_000n,
      maxFeePerGas: o.maxFee ?? 1000n * GWEI,
      maxPriorityFeePerGas: o.tip ?? 0n,
    },
    { common: vm.chain.txCommon },
  );
  return tx.sign(o.key ?? ADMIN_KEY) as TypedTransaction;
}

/** Sends a tx to the VM's pool; its hash. */
export function send(vm: EvmVM, o: Parameters<typeof signedTx>[1]): Promise<Uint8Array> {
  return vm.backend.sendRawTransaction(signedTx(vm, o).serialize());
}

/** Builds, verifies, prefers and accepts one block from what is pending. */
export async function buildAndAccept(vm: EvmVM): Promise<EvmBlock> {
  const b = await vm.buildBlock();
  await b.verify();
  await vm.setPreference(b.id);
  await b.accept();
  return b;
}

/** Parses, verifies, prefers and accepts another VM's block. */
export async function replay(vm: EvmVM, bytes: Uint8Array): Promise<EvmBlock> {
  const b = await vm.parseBlock(bytes);
  await b.verify();
  await vm.setPreference(b.id);
  await b.accept();
  return b;
}

/** The block's bytes with some header fields replaced (JSON header values: 0x strings). */
export function tampered(vm: EvmVM, b: EvmBlock, header: Record<string, string>): Uint8Array {
  const h = b.eth.header.toJSON();
  return createBlock({ header: { ...h, ...header } as never, transactions: b.eth.transactions }, { common: vm.chain.txCommon, skipConsensusFormatValidation: true }).serialize();
}

/** The text of the error `p` rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  assert.unreachable('expected a rejection');
  throw new Error('unreachable');
}

/** The VM's `rpc` handler on a loopback server. */
export async function serveRpc(vm: EvmVM): Promise<{ call(method: string, params?: unknown): Promise<RpcReply>; ok(method: string, params?: unknown[]): Promise<any>; close(): Promise<void> }> {
  const handler = (await vm.createHandlers()).find((h) => h.path === 'rpc')!.http!;
  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const call = (method: string, params: unknown = []) => postRpc(url, method, params);
  return {
    call,
    async ok(method, params = []) {
      const r = await call(method, params);
      assert.is(r.error, undefined, `${method}: ${JSON.stringify(r.error)}`);
      return r.result;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
