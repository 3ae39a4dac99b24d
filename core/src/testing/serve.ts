/**
 * Serves bound services alone, on the node's own HTTP server and JSON-RPC layer (envelope checks,
 * error mapping, result encoding) over loopback, so that a service bound to a fake backend can be
 * called through a typed client or swept (rpcSweep) exactly as a node would serve it.
 */
import { createClient, httpTransport, silentLogger, type BoundService, type Client, type Logger, type ServiceDef } from '@cornice/sdk';
import { JsonRpcEndpoint } from '../api/jsonrpc.js';
import { RouteTable } from '../api/routes.js';
import { HttpApiServer } from '../api/server.js';

export interface ServedServices {
  /** The endpoint's URL, http://127.0.0.1:<port>/ext/<path>. */
  readonly url: string;
  /** A typed client of a served service (errors throw RpcCallError). */
  client<S extends ServiceDef>(def: S): Client<S>;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** The path after /ext/ (default `test`). */
  path?: string;
  log?: Logger;
}

export async function serveServices(services: readonly BoundService[], opts: ServeOptions = {}): Promise<ServedServices> {
  const log = opts.log ?? silentLogger;
  const path = opts.path ?? 'test';
  const routes = new RouteTable();
  routes.mount(path, { kind: 'jsonrpc', endpoint: new JsonRpcEndpoint(services, { maxBatchSize: 16, log }) });
  const server = new HttpApiServer(routes, { host: '127.0.0.1', port: 0, maxBodyBytes: 1 << 20, maxConnections: 64, log });
  const { port } = await server.listen();
  const url = `http://127.0.0.1:${port}/ext/${path}`;
  return {
    url,
    client: (def) => createClient(def, httpTransport(url)),
    close: () => server.close(),
  };
}
