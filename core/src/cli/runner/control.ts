/**
 * How `cornice network restart|stop` reach the runner that `start` keeps in the foreground: a
 * control socket in the network dir (`<dir>/runner.sock`; a named pipe on Windows; in the temp dir
 * when the dir's path is too long for a socket), named in network.json. One request per
 * connection, one JSON line each way. Only the runner's user can connect: the network dir is 0700.
 * When nothing answers there (the runner was killed, or its terminal closed), the commands do the
 * work themselves from network.json (local-network.ts).
 */
import { createHash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type ControlRequest = { cmd: 'ping' } | { cmd: 'stop' } | { cmd: 'restart'; node: number };
export type ControlReply = { ok: true; lines: string[] } | { ok: false; error: string };

/** Longest request line the runner reads. */
const MAX_REQUEST_BYTES = 4096;
/** Longest a Unix socket path may be on every platform we run on (sun_path is 104 bytes on macOS). */
const MAX_SOCKET_PATH_BYTES = 100;

/** Where the runner of the network in `dir` listens. */
export function controlPath(dir: string): string {
  const hash = createHash('sha256').update(dir).digest('hex').slice(0, 16);
  if (process.platform === 'win32') return `\\\\.\\pipe\\cornice-network-${hash}`;
  const inDir = join(dir, 'runner.sock');
  return Buffer.byteLength(inDir) <= MAX_SOCKET_PATH_BYTES ? inDir : join(tmpdir(), `cornice-network-${hash}.sock`);
}

/** What the runner does with a request: its reply, and what to do once the reply is sent. */
export type ControlHandler = (req: ControlRequest) => Promise<{ reply: ControlReply; after?: () => void }>;

function parseRequest(line: string): ControlRequest | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (r.cmd === 'ping' || r.cmd === 'stop') return { cmd: r.cmd };
  if (r.cmd === 'restart' && Number.isSafeInteger(r.node)) return { cmd: 'restart', node: r.node as number };
  return undefined;
}

/** Listens on `path` (a stale socket file left by a killed runner is replaced). */
export async function serveControl(path: string, handle: ControlHandler): Promise<Server> {
  if (process.platform !== 'win32') await unlink(path).catch(() => {});
  const server = createServer((socket) => {
    let buffered = '';
    let answered = false;
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      if (answered) return;
      buffered += chunk;
      const nl = buffered.indexOf('\n');
      if (nl < 0 && buffered.length <= MAX_REQUEST_BYTES) return;
      answered = true;
      const req = nl >= 0 && nl <= MAX_REQUEST_BYTES ? parseRequest(buffered.slice(0, nl)) : undefined;
      const send = (reply: ControlReply, after?: () => void) => socket.end(`${JSON.stringify(reply)}\n`, after);
      if (!req) return send({ ok: false, error: 'not a runner request' });
      handle(req).then(
        ({ reply, after }) => send(reply, after),
        (e: unknown) => send({ ok: false, error: e instanceof Error ? e.message : String(e) }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Ref'd: while the runner serves restarts, it runs even when every node has exited.
  return server;
}

/**
 * Sends `req` to the runner at `path`: its reply, or undefined when no runner listens there
 * (no socket, or nobody accepting). Throws when a runner took the request but did not answer
 * within `timeoutMs`.
 */
export function askRunner(path: string, req: ControlRequest, timeoutMs: number): Promise<ControlReply | undefined> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let buffered = '';
    const socket = createConnection(path);
    socket.setEncoding('utf8');
    const timer = setTimeout(() => {
      socket.destroy();
      if (connected) reject(new Error(`the runner took the request but did not answer within ${Math.round(timeoutMs / 1000)} s`));
      else resolve(undefined);
    }, timeoutMs);
    const finish = (reply: ControlReply | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify(req)}\n`);
    });
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      const nl = buffered.indexOf('\n');
      if (nl < 0) return;
      try {
        finish(JSON.parse(buffered.slice(0, nl)) as ControlReply);
      } catch {
        finish({ ok: false, error: 'the runner sent an unreadable reply' });
      }
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected) return finish(undefined); // ENOENT, ECONNREFUSED: no runner there
      clearTimeout(timer);
      reject(new Error(`lost the runner while waiting for its reply: ${e.message}`));
    });
    socket.on('close', () => {
      if (connected && !buffered.includes('\n')) {
        clearTimeout(timer);
        reject(new Error('the runner closed the connection without answering (did it stop?)'));
      }
    });
  });
}
