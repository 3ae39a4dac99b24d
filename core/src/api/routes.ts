/**
 * The route table behind /ext/: endpoints (`admin`, `bc/<chainID>`, `bc/<chainID>/rpc`, …), endpoint
 * aliases, and chain aliases (admin.aliasChain) resolved live for `bc/<alias>`.
 *
 * Endpoint aliases come from two owners:
 * - the node (a chain's `P`/`X`, a VM's `vm/<alias>`): `alias()`, checked like a mount;
 * - the admin service (admin.alias): `addAdminAlias()`. Such an alias never shadows what is served:
 *   it may not equal, lie under or be a prefix of a mounted path or another alias, nor start with
 *   `bc/` or `vm/` (where chains and VMs appear while the node runs, and `bc/<chain alias>`
 *   resolves); at most `maxAdminAliases` exist at once; `removeAdminAlias()` takes one back.
 *   A path the node mounts or aliases later wins: a conflicting admin alias is dropped (and
 *   reported through `onAdminAliasDropped`). Tests: core/test/api/routes.test.ts,
 *   test/e2e/api-abuse.test.ts "admin.alias cannot hijack".
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

export class RouteError extends NodeError<'AliasTaken' | 'NoSuchEndpoint' | 'BadAlias' | 'Reserved' | 'TooManyAliases' | 'NoSuchAlias'> {}

export interface RouteTableOptions {
  /** Most aliases admin.alias may have added at once (default DEFAULT_MAX_ADMIN_ALIASES). */
  maxAdminAliases?: number;
  /** Called when a path the node mounts or aliases displaces an admin alias. */
  onAdminAliasDropped?: (alias: string, by: string) => void;
}

export const DEFAULT_MAX_ADMIN_ALIASES = 64;

const ALIAS = /^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/;
const MAX_DEPTH = 8;
/** First path segments kept for the node: chains (`bc/<id or chain alias>/…`) and VMs (`vm/<id or alias>`). */
const RESERVED_PREFIXES = ['bc', 'vm'];

interface AliasEntry {
  target: string;
  /** Added by admin.alias (removable, bounded, displaced by the node's own paths). */
  admin: boolean;
}

/** Whether one path equals the other or lies under it, segment-wise (`a/b` and `a/b/c`; not `a/bc`). */
function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

export class RouteTable {
  readonly #routes = new Map<string, Route>();
  readonly #aliases = new Map<string, AliasEntry>();
  readonly #maxAdminAliases: number;
  readonly #onDropped: (alias: string, by: string) => void;

  constructor(
    private readonly chains: ChainResolver = { resolve: () => undefined },
    opts: RouteTableOptions = {},
  ) {
    this.#maxAdminAliases = opts.maxAdminAliases ?? DEFAULT_MAX_ADMIN_ALIASES;
    this.#onDropped = opts.onAdminAliasDropped ?? (() => undefined);
  }

  /** Adds an endpoint; `path` is the part after /ext/ (e.g. `admin`, `bc/<chainID>/rpc`). */
  mount(path: string, route: Route): void {
    if (this.#routes.has(path) || this.#systemAlias(path)) throw new RouteError('AliasTaken', `/ext/${path} is already in use`);
    this.#dropAdminAliasesOver(path);
    this.#routes.set(path, route);
  }

  unmount(path: string): void {
    this.#routes.delete(path);
  }

  /** The node's own alias (a chain's `P`, a VM's `vm/<alias>`): /ext/<alias> serves /ext/<endpoint>, live. */
  alias(endpoint: string, alias: string): void {
    this.#checkSyntax(alias);
    const target = this.#target(endpoint);
    this.#dropAdminAliasesOver(alias);
    if (this.#aliases.has(alias) || this.lookup(alias) !== undefined) throw new RouteError('AliasTaken', `/ext/${alias} is already in use`);
    this.#aliases.set(alias, { target, admin: false });
  }

  /**
   * admin.alias: like alias(), but it may not shadow anything served now (see the file comment),
   * may not lie in bc/ or vm/, and is bounded in number.
   */
  addAdminAlias(endpoint: string, alias: string): void {
    this.#checkSyntax(alias);
    const first = alias.split('/', 1)[0]!;
    if (RESERVED_PREFIXES.includes(first)) {
      throw new RouteError('Reserved', `/ext/${first}/… is reserved for the node's chains and VMs: choose an alias outside ${RESERVED_PREFIXES.map((p) => `${p}/`).join(' and ')}`);
    }
    const target = this.#target(endpoint);
    for (const taken of [...this.#routes.keys(), ...this.#aliases.keys()]) {
      if (!overlaps(alias, taken)) continue;
      const how = alias === taken ? 'is already in use' : alias.startsWith(`${taken}/`) ? `lies under /ext/${taken}` : `would shadow /ext/${taken}`;
      throw new RouteError('AliasTaken', `/ext/${alias} ${how}`.slice(0, 600));
    }
    if (this.adminAliases().length >= this.#maxAdminAliases) {
      throw new RouteError(
        'TooManyAliases',
        `at most ${this.#maxAdminAliases} aliases may be added with admin.alias (--api-admin-max-aliases); remove one with admin.removeAlias first`,
      );
    }
    this.#aliases.set(alias, { target, admin: true });
  }

  /** admin.removeAlias: forgets an alias admin.alias added; the node's own aliases are refused. */
  removeAdminAlias(alias: string): void {
    const entry = this.#aliases.get(alias);
    if (entry?.admin !== true) {
      const why = entry ? 'is not an alias added with admin.alias' : 'is not an alias';
      throw new RouteError('NoSuchAlias', `/ext/${alias.slice(0, 512)} ${why}`);
    }
    this.#aliases.delete(alias);
  }

  /** The aliases admin.alias added, with their targets, in the order added. */
  adminAliases(): Array<{ alias: string; endpoint: string }> {
    return [...this.#aliases].filter(([, e]) => e.admin).map(([alias, e]) => ({ alias, endpoint: e.target }));
  }

  /** The route serving /ext/<path>, following endpoint and chain aliases. */
  lookup(path: string): Route | undefined {
    return this.#routes.get(path) ?? this.#routes.get(this.#canonical(path, 0));
  }

  /** All mounted paths (not aliases), for diagnostics and sweeps. */
  paths(): string[] {
    return [...this.#routes.keys()];
  }

  #checkSyntax(alias: string): void {
    if (!ALIAS.test(alias) || alias.split('/').some((s) => s === '.' || s === '..')) {
      throw new RouteError('BadAlias', `alias must be path segments of letters, digits, '.', '_', '~' or '-' (got "${alias.slice(0, 64)}")`);
    }
  }

  /** The canonical path an alias of `endpoint` points at; NoSuchEndpoint when nothing is served there or under it. */
  #target(endpoint: string): string {
    const target = this.#canonical(endpoint, 0);
    if (!this.#serves(target)) throw new RouteError('NoSuchEndpoint', `/ext/${endpoint.slice(0, 256)} doesn't exist`);
    return target;
  }

  #systemAlias(path: string): boolean {
    return this.#aliases.get(path)?.admin === false;
  }

  /** The node's own path `path` wins over admin aliases that overlap it: they are dropped. */
  #dropAdminAliasesOver(path: string): void {
    for (const [alias, e] of this.#aliases) {
      if (e.admin && overlaps(alias, path)) {
        this.#aliases.delete(alias);
        this.#onDropped(alias, path);
      }
    }
  }

  /** Whether `path` or a path under it is mounted (an EVM chain serves only bc/<id>/rpc and /ws). */
  #serves(path: string): boolean {
    if (this.#routes.has(path)) return true;
    for (const p of this.#routes.keys()) if (p.startsWith(`${path}/`)) return true;
    return false;
  }

  /**
   * `path` with endpoint aliases and chain aliases replaced by what they stand for (whether or not
   * anything is mounted there: `bc/C` of an EVM chain serves only `bc/<id>/rpc` and `/ws`).
   */
  #canonical(path: string, depth: number): string {
    if (depth > MAX_DEPTH || this.#routes.has(path)) return path;
    // Longest endpoint alias that is the path or a leading run of its segments.
    for (let end = path.length; end > 0; end = path.lastIndexOf('/', end - 1)) {
      const entry = this.#aliases.get(path.slice(0, end));
      if (entry !== undefined) return this.#canonical(entry.target + path.slice(end), depth + 1);
    }
    if (path.startsWith('bc/')) {
      const slash = path.indexOf('/', 3);
      const chain = slash < 0 ? path.slice(3) : path.slice(3, slash);
      const id = this.chains.resolve(chain);
      if (id !== undefined && id !== chain) return this.#canonical(`bc/${id}${slash < 0 ? '' : path.slice(slash)}`, depth + 1);
    }
    return path;
  }
}
