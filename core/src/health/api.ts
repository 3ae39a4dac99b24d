import { defineService, method, p, result } from '@cornice/sdk';
import type { HealthReport } from './checks.js';

/** health: liveness of the node. Served at /ext/health (JSON-RPC POST, or a plain GET). */
export const healthApi = defineService('health', {
  getLiveness: method({ params: p.none(), result: result<HealthReport>(), doc: 'Run the liveness checks' }),
});
