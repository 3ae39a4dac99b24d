/** Starts a real node in this process on 127.0.0.1 with an ephemeral port, for HTTP-level tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@cornice/sdk';
import { postJson, postRpc, type RpcReply } from '../../src/testing/rpc.js';
import { parseConfig } from '../../src/config/parse.js';
import { startNode, type RunningNode } from '../../src/node/node.js';

export const FAST_KDF = { N: 1024, r: 8, p: 1 };

export type { RpcReply };

export interface TestNode extends RunningNode {
  dataDir: string;
  /** POSTs a JSON-RPC call to /ext/<path> and returns the parsed reply. */
  call(path: string, method: string, params?: unknown): Promise<RpcReply>;
  /** Stops the node and removes its data dir. */
  close(): Promise<void>;
}


export async function startTestNode(flags: string[] = [], opts: { now?: () => number; dataDir?: string } = {}): Promise<TestNode> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'cornice-test-')));
  const parsed = parseConfig(
    ['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dataDir}`, '--log-level=off', ...flags],
    {},
  );
  if (parsed.kind !== 'run') throw new TypeError('expected a run config');
  const node = await startNode(parsed.config, { log: silentLogger, keystoreKdf: FAST_KDF, ...(opts.now ? { now: opts.now } : {}) });
  return Object.assign(Object.create(null), node, {
    stop: node.stop,
    dataDir,
    call: (path: string, method: string, params?: unknown) => postRpc(`${node.url}/ext/${path}`, method, params),
    close: async () => {
      await node.stop();
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  }) as TestNode;
}

/** POSTs any JSON body and returns the parsed reply. */
export const rpc = postJson;

/** POSTs raw text and returns status, headers and body text. */
export async function post(url: string, body: string, contentType = 'application/json'): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', headers: contentType ? { 'content-type': contentType } : {}, body });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/**
 * JSON-RPC calls that all travel over one keep-alive connection (node:http, one socket), for tests
 * of what the server keys by connection (the keystore throttle of a loopback client). `close()`
 * ends the connection.
 */
export function oneConnection(baseUrl: string): { call(path: string, method: string, params?: unknown): Promise<RpcReply>; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let id = 1;
  return {
    call: (path, method, params) =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: id++, method, params });
        const req = httpRequest(
          `${baseUrl}/ext/${path}`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => {
              try {
                resolve(JSON.parse(text) as RpcReply);
              } catch (e) {
                reject(e);
              }
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}
