import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from './metrics.js';

/** GET /ext/metrics: Prometheus text exposition of the node's registry. */
export function metricsHandler(registry: Registry) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' });
      return void res.end('metrics are read with GET\n');
    }
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
}
