// A load client in its own process: keeps `inflight` JSON-RPC calls outstanding over that many
// keep-alive HTTP/1.1 connections (one request in flight per connection), for `seconds`, then
// prints one JSON line with the completed round trips per second. Raw sockets keep the client's
// own CPU cost low, so the figure is the server's.
// Usage: node rpc-client.mjs <port> <path> <method> <inflight> <seconds> [paramsJSON]
import { connect } from 'node:net';

const [port, path, method, inflight = '64', seconds = '5', params = '{}'] = process.argv.slice(2);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: JSON.parse(params) });
const request = Buffer.from(
  `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
);
const warmupMs = 1000;
const durationMs = Number(seconds) * 1000;
let counting = false;
let done = 0;
let errors = 0;
const latencies = [];

function connection() {
  return new Promise((resolve) => {
    const sock = connect(Number(port), '127.0.0.1');
    sock.setNoDelay(true);
    let buf = Buffer.alloc(0);
    let sentAt = 0;
    const send = () => {
      sentAt = performance.now();
      sock.write(request);
    };
    sock.on('connect', send);
    sock.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const payload = buf.subarray(end + 4, end + 4 + len).toString();
        buf = buf.subarray(end + 4 + len);
        if (counting) {
          done++;
          latencies.push(performance.now() - sentAt);
          if (!head.startsWith('HTTP/1.1 200') || !payload.includes('"result"')) errors++;
        }
        if (stopped) return sock.end(resolve);
        send();
      }
    });
    sock.on('error', (e) => {
      errors++;
      resolve(e);
    });
  });
}

let stopped = false;
const conns = Array.from({ length: Number(inflight) }, connection);
await new Promise((r) => setTimeout(r, warmupMs));
counting = true;
const t0 = performance.now();
await new Promise((r) => setTimeout(r, durationMs));
counting = false;
const elapsed = (performance.now() - t0) / 1000;
stopped = true;
await Promise.race([Promise.all(conns), new Promise((r) => setTimeout(r, 2000))]);
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.floor((latencies.length - 1) * p)] ?? null;
process.stdout.write(
  `${JSON.stringify({ perSecond: Math.round(done / elapsed), done, errors, p50ms: pct(0.5), p99ms: pct(0.99) })}\n`,
);
process.exit(0);
