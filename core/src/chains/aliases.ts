/**
 * Chain aliases: every chain is known by its cb58 ID and any number of aliases (`X`, `avm`, …;
 * admin.aliasChain adds more). The first alias is the chain's primary alias. Chains register here
 * when the chain manager creates them; the HTTP routes resolve `bc/<alias>` through this table live.
 *
 * Aliases added with admin.aliasChain (`alias()`) are bounded in number (`maxAdminAliases`) and can be
 * taken back (`removeAlias()`); a chain registered later with the same name or ID wins over them
 * (the admin alias is dropped), so no call can make a chain's creation fail. Tests:
 * core/test/chains/aliases.test.ts.
 */
import { Id, NodeError } from '@cornice/sdk';

export class AliasError extends NodeError<'UnknownAlias' | 'AliasTaken' | 'BadAlias' | 'TooManyAliases'> {}

const ALIAS = /^[A-Za-z0-9._~-]{1,128}$/;

export const DEFAULT_MAX_ADMIN_CHAIN_ALIASES = 64;

export interface ChainAliasesOptions {
  /** Most aliases admin.aliasChain may have added at once (default DEFAULT_MAX_ADMIN_CHAIN_ALIASES). */
  maxAdminAliases?: number;
}

export class ChainAliases {
  /** alias or cb58 ID -> cb58 chain ID */
  readonly #toId = new Map<string, string>();
  /** cb58 chain ID -> aliases in order of registration */
  readonly #aliases = new Map<string, string[]>();
  /** The aliases admin.aliasChain added (still present). */
  readonly #added = new Set<string>();
  readonly #maxAdminAliases: number;

  constructor(opts: ChainAliasesOptions = {}) {
    this.#maxAdminAliases = opts.maxAdminAliases ?? DEFAULT_MAX_ADMIN_CHAIN_ALIASES;
  }

  /** Registers a chain with its initial aliases; admin aliases with the same names (or its ID) are dropped. */
  register(chainId: Id, aliases: readonly string[] = []): void {
    const id = chainId.toString();
    if (this.#aliases.has(id)) throw new AliasError('AliasTaken', `chain ${id} is already registered`);
    for (const name of [id, ...aliases]) if (this.#added.has(name)) this.#forget(name);
    for (const a of aliases) this.#checkFree(a);
    this.#toId.set(id, id);
    this.#aliases.set(id, []);
    for (const a of aliases) this.#add(id, a);
  }

  /** Forgets a chain and all its aliases (a chain whose creation was undone). */
  unregister(chainId: Id): void {
    const id = chainId.toString();
    for (const a of this.#aliases.get(id) ?? []) {
      this.#toId.delete(a);
      this.#added.delete(a);
    }
    this.#aliases.delete(id);
    this.#toId.delete(id);
  }

  /** admin.aliasChain: `chain` is an ID or an existing alias. Bounded (TooManyAliases). */
  alias(chain: string, alias: string): void {
    const id = this.lookup(chain).toString();
    this.#checkFree(alias);
    if (this.#added.size >= this.#maxAdminAliases) {
      throw new AliasError(
        'TooManyAliases',
        `at most ${this.#maxAdminAliases} chain aliases may be added with admin.aliasChain (--api-admin-max-aliases); remove one with admin.removeChainAlias first`,
      );
    }
    this.#add(id, alias);
    this.#added.add(alias);
  }

  /** admin.removeChainAlias: forgets an alias admin.aliasChain added (a chain's own aliases and IDs are refused). */
  removeAlias(alias: string): void {
    if (!this.#added.has(alias)) {
      const why = this.#toId.has(alias) ? 'was not added with admin.aliasChain' : 'is not a chain alias';
      throw new AliasError('UnknownAlias', `${alias.slice(0, 128)} ${why}`);
    }
    this.#forget(alias);
  }

  /** The chain ID for an alias or ID; `there is no ID with alias <a>` when unknown. */
  lookup(aliasOrId: string): Id {
    const id = this.#toId.get(aliasOrId);
    if (id === undefined) throw new AliasError('UnknownAlias', `there is no ID with alias ${aliasOrId.slice(0, 128)}`);
    return Id.fromString(id);
  }

  /** Like lookup, for route resolution: the cb58 ID string or undefined. */
  resolve(aliasOrId: string): string | undefined {
    return this.#toId.get(aliasOrId);
  }

  /** The aliases of a chain (primary first); throws when the chain is unknown. */
  aliases(chainId: Id): string[] {
    const list = this.#aliases.get(chainId.toString());
    if (!list) throw new AliasError('UnknownAlias', `there is no chain with ID ${chainId.toString()}`);
    return [...list];
  }

  /** The primary alias (first registered), or the cb58 ID when the chain has none. */
  primaryAlias(chainId: Id): string {
    return this.#aliases.get(chainId.toString())?.[0] ?? chainId.toString();
  }

  /** Aliases admin.aliasChain added that are still present. */
  get adminAliasCount(): number {
    return this.#added.size;
  }

  #checkFree(alias: string): void {
    if (!ALIAS.test(alias)) {
      throw new AliasError('BadAlias', `alias must be 1 to 128 letters, digits, '.', '_', '~' or '-' (got "${alias.slice(0, 64)}")`);
    }
    if (this.#toId.has(alias)) throw new AliasError('AliasTaken', `alias ${alias} is already used`);
  }

  #add(id: string, alias: string): void {
    this.#toId.set(alias, id);
    this.#aliases.get(id)!.push(alias);
  }

  /** Removes an admin-added alias from the table and from its chain's list. */
  #forget(alias: string): void {
    const id = this.#toId.get(alias);
    this.#toId.delete(alias);
    this.#added.delete(alias);
    const list = id === undefined ? undefined : this.#aliases.get(id);
    const at = list?.indexOf(alias) ?? -1;
    if (at >= 0) list!.splice(at, 1);
  }
}
