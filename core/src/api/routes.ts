/**
 * The route table behind /ext/: endpoints (`admin`, `bc/<chainID>`, `bc/<chainID>/rpc`, …), endpoint
 * aliases added by admin.alias, and chain aliases (admin.aliasChain) resolved live for `bc/<alias>`.
 */
import { NodeError, type WebSocketConnection } from '@cornice/sdk';
import type { JsonRpcEndpoint } from './jsonrpc.js';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Route =
  | { kind: 'jsonrpc'; endpoint: JsonRpcEndpoint; get?: (req: IncomingMessage, res: ServerResponse) => Promise<void> }
  | { kind: 'http'; handle(req: IncomingMessage, res: ServerResponse): void | Promise<void> }
  | { kind: 'websocket'; accept(conn: WebSocketConnection): void };

/** Resolves a chain alias or cb58 chain ID to the chain ID string (undefined when unknown). */
export interface ChainResolver {
  resolve(aliasOrId: string): string | undefined;
}

export class RouteError extends NodeError<'AliasTaken' | 'NoSuchEndpoint' | 'BadAlias'> {}

const ALIAS = /^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/;
const MAX_DEPTH = 8;

export class RouteTable {
  readonly #routes = new Map<string, Route>();
  readonly #aliases = new Map<string, string>();

  constructor(private readonly chains: ChainResolver = { resolve: () => undefined }) {}

  /** Adds an endpoint; `path` is the part after /ext/ (e.g. `admin`, `bc/<chainID>/rpc`). */
  mount(path: string, route: Route): void {
    if (this.#routes.has(path) || this.#aliases.has(path)) throw new RouteError('AliasTaken', `/ext/${path} is already in use`);
    this.#routes.set(path, route);
  }

  unmount(path: string): void {
    this.#routes.delete(path);
  }

  /** admin.alias: /ext/<alias> serves what /ext/<endpoint> serves (sub-paths included), live. */
  alias(endpoint: string, alias: string): void {
    if (!ALIAS.test(alias) || alias.split('/').some((s) => s === '.' || s === '..')) {
      throw new RouteError('BadAlias', `alias must be path segments of letters, digits, '.', '_', '~' or '-' (got "${alias.slice(0, 64)}")`);
    }
    const target = this.#canonical(endpoint, 0) ?? endpoint;
    if (!this.#serves(target)) throw new RouteError('NoSuchEndpoint', `/ext/${endpoint.slice(0, 256)} doesn't exist`);
    if (this.#canonical(alias, 0) !== undefined) throw new RouteError('AliasTaken', `/ext/${alias} is already in use`);
    this.#aliases.set(alias, target);
  }

  /** The route serving /ext/<path>, following endpoint and chain aliases. */
  lookup(path: string): Route | undefined {
    const direct = this.#routes.get(path);
    if (direct) return direct;
    const c = this.#canonical(path, 0);
    return c === undefined ? undefined : this.#routes.get(c);
  }

  /** All mounted paths (not aliases), for diagnostics and sweeps. */
  paths(): string[] {
    return [...this.#routes.keys()];
  }

  /** Whether `path` or a path under it is mounted (an EVM chain serves only bc/<id>/rpc and /ws). */
  #serves(path: string): boolean {
    if (this.#routes.has(path)) return true;
    for (const p of this.#routes.keys()) if (p.startsWith(`${path}/`)) return true;
    return false;
  }

  #canonical(path: string, depth: number): string | undefined {
    if (depth > MAX_DEPTH) return undefined;
    if (this.#routes.has(path)) return path;
    // Longest endpoint alias that is the path or a leading run of its segments.
    for (let end = path.length; end > 0; end = path.lastIndexOf('/', end - 1)) {
      const target = this.#aliases.get(path.slice(0, end));
      if (target !== undefined) return this.#canonical(target + path.slice(end), depth + 1);
    }
    if (path.startsWith('bc/')) {
      const slash = path.indexOf('/', 3);
      const chain = slash < 0 ? path.slice(3) : path.slice(3, slash);
      const id = this.chains.resolve(chain);
      if (id !== undefined && id !== chain) return this.#canonical(`bc/${id}${slash < 0 ? '' : path.slice(slash)}`, depth + 1);
    }
    return undefined;
  }
}
