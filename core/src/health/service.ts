import type { IncomingMessage, ServerResponse } from 'node:http';
import { bindService, type BoundService } from '@cornice/sdk';
import { healthApi } from './api.js';
import type { HealthChecks } from './checks.js';

export function healthService(checks: HealthChecks): BoundService {
  return bindService(healthApi, {
    async getLiveness() {
      return checks.run();
    },
  });
}

/** GET /ext/health: the report as JSON, HTTP 200 when healthy and 503 otherwise (for load balancers). */
export async function healthGet(checks: HealthChecks, res: ServerResponse): Promise<void> {
  const report = await checks.run();
  const body = JSON.stringify(report);
  res.writeHead(report.healthy ? 200 : 503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export type { IncomingMessage };
