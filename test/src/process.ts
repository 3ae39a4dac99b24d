/**
 * Starts real `cornice` processes for end-to-end tests and reads their JSON log lines. The HTTP
 * port is ephemeral (--http-port=0); the URL comes from the `node started` log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { postRpc, type RpcReply } from '@cornice/core/testing';

export const CORNICE_BIN = fileURLToPath(new URL('../../../core/bin/cornice.js', import.meta.url));

export interface NodeProcess {
  proc: ChildProcess;
  url: string;
  nodeId: string;
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  /** Milliseconds from spawn to the `node started` line. */
  startMs: number;
  call(path: string, method: string, params?: unknown): Promise<RpcReply>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Where to run from: another install's `cornice` bin (or another node CLI), another working directory, extra environment. */
export interface SpawnOptions {
  bin?: string;
  cwd?: string;
  env?: Record<string, string>;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (for --help, bad flags, start-up failures). */
export function runCli(args: string[], timeoutMs = 30_000, opts: SpawnOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [opts.bin ?? CORNICE_BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that a timeout also ends what it started (`hardhat run` forks the
      // script, which would otherwise keep running and hold our pipes open).
      detached: true,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        proc.kill('SIGKILL');
      }
      reject(new Error(`${opts.bin ?? 'cornice'} ${args.join(' ')} did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export function startNodeProcess(args: string[], timeoutMs = 30_000, opts: SpawnOptions = {}): Promise<NodeProcess> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [opts.bin ?? CORNICE_BIN, '--http-port=0', '--staking-port=0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  let buffered = '';
  let exited: Promise<number | null> = new Promise((resolve) => proc.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`node did not start within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    proc.stderr!.on('data', (d) => (stderr += d));
    proc.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        logs.push(entry);
        if (entry.msg === 'node started') {
          clearTimeout(timer);
          const url = String(entry.http);
          resolve({
            proc,
            url,
            nodeId: String(entry.nodeId),
            logs,
            startMs: performance.now() - t0,
            call: (path, method, params) => postRpc(`${url}/ext/${path}`, method, params),
            stop: (signal = 'SIGTERM') => {
              if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
              return exited;
            },
          });
        }
      }
    });
    exited = exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before starting; stderr: ${stderr}`));
      return code;
    });
  });
}
