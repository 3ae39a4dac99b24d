/**
 * Foundry's anvil and cast from their npm packages (@foundry-rs/anvil, @foundry-rs/cast: the
 * platform binary itself, so that stopping it ends it), for tests that compare the node with anvil
 * or drive it with cast.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { postRpc, type RpcReply } from '@cornice/core/testing';
import { freePort, until } from './network.js';

const require = createRequire(import.meta.url);

/** The path of a Foundry tool's binary for this platform (`anvil`, `cast`). */
export function foundryBin(tool: 'anvil' | 'cast'): string {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string] ?? process.arch;
  return join(dirname(require.resolve(`@foundry-rs/${tool}-${process.platform}-${arch}/package.json`)), 'bin', tool);
}

export interface Anvil {
  url: string;
  call(method: string, params?: unknown[]): Promise<RpcReply>;
  stop(): Promise<void>;
}

export interface AnvilOptions {
  /** The chain ID (default anvil's 31337); the same as another target's so that signed txs are equal. */
  chainId?: bigint;
  /**
   * anvil's `--steps-tracing`: without it anvil records no steps and its struct logger answers
   * `structLogs: []` (callTracer and the others work either way).
   */
  stepsTracing?: boolean;
}

/** anvil on a free loopback port, on the C-Chain's fork (cancun), automining one block per tx. */
export async function startAnvil(o: AnvilOptions = {}): Promise<Anvil> {
  const port = await freePort();
  const args = ['--host', '127.0.0.1', '--port', String(port), '--hardfork', 'cancun', '--silent'];
  if (o.chainId !== undefined) args.push('--chain-id', o.chainId.toString());
  if (o.stepsTracing) args.push('--steps-tracing');
  const proc: ChildProcess = spawn(foundryBin('anvil'), args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const call = (method: string, params: unknown[] = []) => postRpc(url, method, params);
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  try {
    await until('anvil', async () => (await call('eth_chainId').catch(() => undefined))?.result ?? undefined, 30_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, call, stop };
}

export interface CastResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `cast <args>` to completion, offline: HOME is `home` (a fresh dir, so no signature cache or
 * config of the user's is read) and FOUNDRY_OFFLINE keeps it from asking remote signature databases
 * or Etherscan; colours off so the output can be matched.
 */
export function runCast(args: string[], home: string, timeoutMs = 60_000): Promise<CastResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(foundryBin('cast'), args, {
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: home, FOUNDRY_OFFLINE: 'true', NO_COLOR: '1', FOUNDRY_DISABLE_NIGHTLY_WARNING: '1' },
    });
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (d) => (stdout += d));
    proc.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`cast ${args.join(' ')} did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
