/**
 * Chain aliases: every chain is known by its cb58 ID and any number of aliases (`X`, `avm`, …;
 * admin.aliasChain adds more). The first alias is the chain's primary alias. Chains register here
 * when the chain manager creates them; the HTTP routes resolve `bc/<alias>` through this table live.
 */
import { Id, NodeError } from '@cornice/sdk';

export class AliasError extends NodeError<'UnknownAlias' | 'AliasTaken' | 'BadAlias'> {}

const ALIAS = /^[A-Za-z0-9._~-]{1,128}$/;

export class ChainAliases {
  /** alias or cb58 ID -> cb58 chain ID */
  readonly #toId = new Map<string, string>();
  /** cb58 chain ID -> aliases in order of registration */
  readonly #aliases = new Map<string, string[]>();

  /** Registers a chain with its initial aliases. */
  register(chainId: Id, aliases: readonly string[] = []): void {
    const id = chainId.toString();
    if (this.#aliases.has(id)) throw new AliasError('AliasTaken', `chain ${id} is already registered`);
    for (const a of aliases) this.#checkFree(a);
    this.#toId.set(id, id);
    this.#aliases.set(id, []);
    for (const a of aliases) this.#add(id, a);
  }

  /** Forgets a chain and all its aliases (a chain whose creation was undone). */
  unregister(chainId: Id): void {
    const id = chainId.toString();
    for (const a of this.#aliases.get(id) ?? []) this.#toId.delete(a);
    this.#aliases.delete(id);
    this.#toId.delete(id);
  }

  /** admin.aliasChain: `chain` is an ID or an existing alias. */
  alias(chain: string, alias: string): void {
    const id = this.lookup(chain).toString();
    this.#checkFree(alias);
    this.#add(id, alias);
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
}
