/**
 * The EVM end-to-end tests' target: any Ethereum JSON-RPC node. By default a real cornice node
 * (its C-Chain at /ext/bc/C/rpc and /ext/bc/C/ws); with CORNICE_EVM_TEST_TARGET=hardhat, hardhat's
 * own node (`hardhat node` with the fixture project's config, which funds the same ewoq key), so
 * that the tests themselves can be checked against a reference implementation.
 * Tests never assume a chain ID: they ask the provider.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { postRpc, type RpcReply } from '@cornice/core/testing';
import { Wallet, type TransactionRequest } from 'ethers';
import { REPO, npmStartFlags } from './fixtures.js';
import { freePort, until } from './network.js';
import { startNodeProcess, type NodeProcess } from './process.js';

/** ewoq's EVM key: funded at genesis on the local C-Chain and in the hardhat fixture's network. */
export const EWOQ_EVM_KEY = '0x56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
export const EWOQ_EVM_ADDRESS = '0x8db97C7cEcE249c2b98bDC0226Cc4C2A57BF52FC';

export const HARDHAT_PROJECT = join(REPO, 'test/fixtures/hardhat-project');
const require = createRequire(import.meta.url);
export const HARDHAT_BIN = join(dirname(require.resolve('hardhat/package.json')), 'internal/cli/bootstrap.js');

/** What an EVM test calls: an EvmTarget, or any JSON-RPC endpoint (anvil's, say). */
export interface Rpc {
  call(method: string, params?: unknown[]): Promise<RpcReply>;
}

/** `method`'s result; a JSON-RPC error fails with the method's name and the error. */
export async function ok(rpc: Rpc, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc.call(method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** The receipt of `hash`, once the tx is mined. */
export function receiptOf(rpc: Rpc, hash: string): Promise<any> {
  return until(`receipt of ${hash}`, async () => (await ok(rpc, 'eth_getTransactionReceipt', [hash])) ?? undefined, 30_000);
}

/**
 * Signs `tx` from ewoq with explicit fields (its pending nonce, twice the gas price, 3M gas unless
 * given: nothing estimated, so a tx that reverts is sent as well), sends it raw and returns its receipt.
 */
export async function sendFromEwoq(rpc: Rpc, chainId: bigint, tx: TransactionRequest): Promise<any> {
  const nonce = Number(BigInt(await ok(rpc, 'eth_getTransactionCount', [EWOQ_EVM_ADDRESS, 'pending'])));
  const price = BigInt(await ok(rpc, 'eth_gasPrice')) * 2n;
  const fees = tx.type === 2 ? { maxFeePerGas: price, maxPriorityFeePerGas: price / 2n } : { gasPrice: price };
  const raw = await new Wallet(EWOQ_EVM_KEY).signTransaction({ chainId, nonce, gasLimit: 3_000_000n, ...fees, ...tx });
  return receiptOf(rpc, await ok(rpc, 'eth_sendRawTransaction', [raw]));
}

export type EvmTargetKind = 'cornice' | 'hardhat';

export function evmTargetKind(): EvmTargetKind {
  const v = process.env.CORNICE_EVM_TEST_TARGET ?? 'cornice';
  if (v !== 'cornice' && v !== 'hardhat') throw new Error(`CORNICE_EVM_TEST_TARGET must be cornice or hardhat, got ${v}`);
  return v;
}

export interface EvmTarget {
  kind: EvmTargetKind;
  rpcUrl: string;
  wsUrl: string;
  /** cornice: the node's /ext/health; hardhat: none. */
  healthUrl?: string;
  /** Whether restart() keeps the chain (cornice with LevelDB); hardhat's node keeps state in memory. */
  persistent: boolean;
  /** The cornice process, when the target is cornice. */
  node?: NodeProcess;
  call(method: string, params?: unknown[]): Promise<RpcReply>;
  /** Ends the node with `signal` and starts it again on the same data (cornice); a no-op on hardhat's node. */
  restart(signal?: NodeJS.Signals): Promise<number | null>;
  stop(): Promise<void>;
}

export interface EvmTargetOptions {
  /** The cornice node's data dir (fresh per test file). */
  dataDir: string;
  dbType?: 'leveldb' | 'memory';
  extraFlags?: string[];
}

/** Waits until the endpoint answers eth_chainId (a cornice chain boots after `node started`). */
async function untilServing(rpcUrl: string, maxMs = 20_000): Promise<void> {
  await until(
    `eth_chainId at ${rpcUrl}`,
    async () => {
      try {
        const r = await postRpc(rpcUrl, 'eth_chainId', []);
        return r.result ? true : undefined;
      } catch {
        return undefined;
      }
    },
    maxMs,
  );
}

/**
 * Wraps a suite's before-hook: uvu does not print a hook's error (the file just shows 0 passed), so
 * it goes to stderr, which the test runner shows with the failure.
 */
export function setupReporting(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await fn();
    } catch (e) {
      console.error(`setup failed: ${(e as Error).stack ?? String(e)}`);
      throw e;
    }
  };
}

export async function startEvmTarget(o: EvmTargetOptions): Promise<EvmTarget> {
  return evmTargetKind() === 'hardhat' ? startHardhatTarget() : startCorniceTarget(o);
}

async function startCorniceTarget(o: EvmTargetOptions): Promise<EvmTarget> {
  const args = [...npmStartFlags(), `--data-dir=${o.dataDir}`, `--db-type=${o.dbType ?? 'leveldb'}`, ...(o.extraFlags ?? [])];
  const target: EvmTarget = {
    kind: 'cornice',
    rpcUrl: '',
    wsUrl: '',
    persistent: (o.dbType ?? 'leveldb') === 'leveldb',
    call: (method, params = []) => postRpc(target.rpcUrl, method, params),
    restart: async (signal = 'SIGTERM') => {
      const code = await target.node!.stop(signal);
      await boot();
      return code;
    },
    stop: async () => {
      await target.node?.stop();
    },
  };
  const boot = async () => {
    const node = await startNodeProcess(args, 60_000);
    target.node = node;
    target.rpcUrl = `${node.url}/ext/bc/C/rpc`;
    target.wsUrl = `${node.url.replace(/^http/, 'ws')}/ext/bc/C/ws`;
    target.healthUrl = `${node.url}/ext/health`;
    try {
      await untilServing(target.rpcUrl);
    } catch (e) {
      await node.stop('SIGKILL');
      throw new Error(`the cornice node started but serves no C-Chain at /ext/bc/C/rpc: ${(e as Error).message}`);
    }
  };
  await boot();
  return target;
}

/** Starts `hardhat node` on a free loopback port with the fixture project's config (ewoq funded). */
export async function startHardhatNode(port?: number): Promise<{ proc: ChildProcess; url: string; stop(): Promise<void> }> {
  const p = port ?? (await freePort());
  const proc = spawn(process.execPath, [HARDHAT_BIN, 'node', '--hostname', '127.0.0.1', '--port', String(p)], {
    cwd: HARDHAT_PROJECT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  const url = `http://127.0.0.1:${p}`;
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  try {
    await until(
      'hardhat node',
      async () => {
        if (proc.exitCode !== null) throw new Error(`hardhat node exited with ${proc.exitCode}: ${stderr}`);
        try {
          return (await postRpc(url, 'eth_chainId', [])).result ? true : undefined;
        } catch {
          return undefined;
        }
      },
      60_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { proc, url, stop };
}

async function startHardhatTarget(): Promise<EvmTarget> {
  const hh = await startHardhatNode();
  return {
    kind: 'hardhat',
    rpcUrl: hh.url,
    wsUrl: hh.url.replace(/^http/, 'ws'),
    persistent: false,
    call: (method, params = []) => postRpc(hh.url, method, params),
    restart: async () => null,
    stop: hh.stop,
  };
}
