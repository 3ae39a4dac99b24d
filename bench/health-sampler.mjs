// A worker thread that samples GET /ext/health latency every `intervalMs` (default 100) and the node's RSS, until the
// parent posts 'stop'; it then posts the latencies and the largest RSS. In a thread of its own so the
// attacking client's work (parsing 25 MB getLogs replies, 1,024 WebSocket handshakes) does not delay
// the sampler's own event loop and count as the node's latency.
import { parentPort, workerData } from 'node:worker_threads';
import { rssMb } from './lib.mjs';

const { url, pid, intervalMs = 100 } = workerData;
const lat = [];
let rss = 0;
let on = true;
parentPort.on('message', (m) => {
  if (m === 'stop') on = false;
});
while (on) {
  const t0 = performance.now();
  try {
    await fetch(`${url}/ext/health`, { signal: AbortSignal.timeout(5_000) });
    lat.push(performance.now() - t0);
  } catch {
    lat.push(5_000);
  }
  rss = Math.max(rss, rssMb(pid));
  await new Promise((r) => setTimeout(r, intervalMs));
}
parentPort.postMessage({ lat, rss });
