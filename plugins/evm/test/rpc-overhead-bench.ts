/**
 * Per-call overhead of the JSON-RPC front end: calls/s of eth_getBalance and eth_call over a real
 * node:http server (front end over the in-memory fake backend), beside a bare node:http server that
 * parses the same JSON and answers the same reply. Each server runs in its own process; the client
 * keeps 32 calls in flight on keep-alive connections. Besides calls/s (which a busy machine skews),
 * it reports each server's CPU time per call (process.cpuUsage of the server process), and the
 * difference: the front end's own cost per call.
 * Run: npx tsc -b plugins/evm && node plugins/evm/dist/test/rpc-overhead-bench.js [seconds]
 */
import { fork } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { MemoryStore, silentLogger, toHex } from '@cornice/sdk';
import { createEthRpc } from '../src/index.js';
import { ALICE, FakeBackend, ManualClock } from './rpc-fake-backend.js';

const IN_FLIGHT = 32;
const BALANCE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x' + toHex(ALICE), 'latest'] });
const CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'eth_call',
  params: [{ to: '0x' + '70'.repeat(20), data: '0x70a08231' + '00'.repeat(12) + toHex(ALICE) }, 'latest'],
});

function serveRpc(): Promise<number> {
  const backend = new FakeBackend();
  backend.recording = false;
  backend.balances.set(toHex(ALICE), 10n ** 21n);
  const rpc = createEthRpc(backend, { clientVersion: 'bench', accounts: new MemoryStore(), log: silentLogger, clock: new ManualClock() });
  return listen(createServer({ keepAlive: true }, (req, res) => void rpc.http(req, res)));
}

/** Parses the body and answers a reply of the same shape, with none of the front end's work. */
function serveBare(): Promise<number> {
  return listen(
    createServer({ keepAlive: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string };
        const result = msg.method === 'eth_call' ? '0x0000002a' : '0x3635c9adc5dea00000';
        const text = `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${JSON.stringify(result)}}`;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
    }),
  );
}

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** The server process's CPU time so far, in µs. */
type CpuProbe = () => Promise<number>;

async function load(port: number, body: string, seconds: number, cpu: CpuProbe): Promise<{ rate: number; cpuMicrosPerCall: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/rpc', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => (text.includes('"result"') ? resolve() : reject(new Error(text))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  // Warm-up, then the measured window.
  const until = (end: number, count: { n: number }) => async (): Promise<void> => {
    while (Date.now() < end) {
      await one();
      count.n++;
    }
  };
  const warm = { n: 0 };
  await Promise.all(Array.from({ length: IN_FLIGHT }, until(Date.now() + 1000, warm)));
  const count = { n: 0 };
  const cpu0 = await cpu();
  const started = Date.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, until(started + seconds * 1000, count)));
  const elapsed = Date.now() - started;
  const cpuMicros = (await cpu()) - cpu0;
  agent.destroy();
  return { rate: Math.round((count.n * 1000) / elapsed), cpuMicrosPerCall: Math.round((cpuMicros / count.n) * 10) / 10 };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode === 'serve-rpc' || mode === 'serve-bare') {
    const port = await (mode === 'serve-rpc' ? serveRpc() : serveBare());
    process.send!(port);
    process.on('message', () => process.send!(process.cpuUsage()));
    return;
  }
  const seconds = Number(mode ?? 5);
  const file = fileURLToPath(import.meta.url);
  for (const [name, body] of [
    ['eth_getBalance', BALANCE],
    ['eth_call', CALL],
  ] as const) {
    const rates: Record<string, { rate: number; cpuMicrosPerCall: number }> = {};
    for (const server of ['serve-bare', 'serve-rpc']) {
      const child = fork(file, [server], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const port = await new Promise<number>((resolve) => child.once('message', (p) => resolve(p as number)));
      const cpu: CpuProbe = () =>
        new Promise((resolve) => {
          child.once('message', (u) => resolve((u as NodeJS.CpuUsage).user + (u as NodeJS.CpuUsage).system));
          child.send('cpu');
        });
      rates[server] = await load(port, body, seconds, cpu);
      child.kill();
    }
    const bare = rates['serve-bare']!;
    const rpc = rates['serve-rpc']!;
    console.log(
      JSON.stringify({
        method: name,
        inFlight: IN_FLIGHT,
        seconds,
        bareCallsPerSec: bare.rate,
        rpcCallsPerSec: rpc.rate,
        bareServerCpuMicrosPerCall: bare.cpuMicrosPerCall,
        rpcServerCpuMicrosPerCall: rpc.cpuMicrosPerCall,
        frontEndMicrosPerCall: Math.round((rpc.cpuMicrosPerCall - bare.cpuMicrosPerCall) * 10) / 10,
      }),
    );
  }
}

void main();
