/**
 * The VMs a node can run, by vmID. Every VM is also known by its factory's name and by any aliases
 * (from the aliases file or `alias()`); chain creation and genesis resolve a vmID, name or alias here.
 */
import { Id, isVMFactory, type VMFactory } from '@cornice/sdk';
import { VMRegistryError } from './errors.js';

/** What `list()` reports of a registered VM. */
export interface VMInfo {
  vmId: Id;
  name: string;
  version: string;
  /** The name first, then the other aliases in the order they were added. */
  aliases: string[];
  /** Where the VM came from: `builtin`, a package specifier, or a plugin file path. */
  source: string;
  /** Where its code lives (package directory or plugin file), when loaded from disk. */
  root?: string;
  /** The module file exporting its `vmFactory`, when loaded from disk (what an isolated VM's worker imports). */
  entry?: string;
}

interface Entry {
  factory: VMFactory;
  vmId: Id;
  aliases: string[];
  source: string;
  root: string | undefined;
  entry: string | undefined;
}

const ALIAS = /^[A-Za-z0-9._~-]{1,128}$/;
const show = (s: string) => (s.length > 128 ? `${s.slice(0, 128)}…` : s);

/** Reads the vmID of a factory as our Id, whatever copy of the sdk built it. */
function toId(x: Id | { bytes: Uint8Array }): Id {
  return x instanceof Id ? x : Id.fromBytes(x.bytes);
}

export class VMRegistry {
  /** vmID key -> entry, in registration order */
  readonly #byId = new Map<string, Entry>();
  /** name or alias -> vmID key */
  readonly #aliases = new Map<string, string>();

  /**
   * Adds a VM; `source` says where it came from (used in errors and `list()`), `root` where its code
   * lives (a fault whose stack runs through it is the VM's), `entry` the module file it came from.
   */
  register(factory: VMFactory, source: string, root?: string, entry?: string): void {
    if (!isVMFactory(factory)) throw new VMRegistryError('InvalidFactory', `${source}: not a VMFactory (needs name, version, vmId of 32 bytes and create())`);
    const vmId = toId(factory.vmId);
    const existing = this.#byId.get(vmId.key);
    if (existing) {
      throw new VMRegistryError(
        'DuplicateVM',
        `duplicate vmID ${vmId.toString()}: ${existing.factory.name} from ${existing.source} and ${factory.name} from ${source}`,
      );
    }
    const owner = this.#aliasOwner(factory.name);
    if (owner) {
      throw new VMRegistryError(
        'AliasTaken',
        `VM name ${show(factory.name)} of ${vmId.toString()} from ${source} is already used by ${owner.vmId.toString()} from ${owner.source}`,
      );
    }
    // Keep the factory itself when its vmId is already our Id; otherwise give the node a real Id.
    const stored: VMFactory =
      factory.vmId instanceof Id
        ? factory
        : {
            name: factory.name,
            version: factory.version,
            vmId,
            create: () => factory.create(),
            ...(factory.staticServices ? { staticServices: () => factory.staticServices!() } : {}),
          };
    this.#byId.set(vmId.key, { factory: stored, vmId, aliases: [factory.name], source, root, entry });
    this.#aliases.set(factory.name, vmId.key);
  }

  /** Gives the VM named by `vmIdOrName` (vmID, name or alias) another alias. Re-adding is a no-op. */
  alias(vmIdOrName: string | Id, alias: string): void {
    const entry = this.#entry(vmIdOrName);
    if (typeof alias !== 'string' || !ALIAS.test(alias)) {
      throw new VMRegistryError('BadAlias', `VM alias must be 1 to 128 letters, digits, '.', '_', '~' or '-' (got "${show(String(alias))}")`);
    }
    const owner = this.#aliasOwner(alias);
    if (owner === entry) return;
    if (owner) {
      throw new VMRegistryError('AliasTaken', `VM alias ${alias} is already used by ${owner.factory.name} (${owner.vmId.toString()}) from ${owner.source}`);
    }
    this.#aliases.set(alias, entry.vmId.key);
    entry.aliases.push(alias);
  }

  /** The factory for a vmID (Id or cb58), name or alias; `unknown vmID <x>` otherwise. */
  resolve(vmIdOrAlias: string | Id): VMFactory {
    return this.#entry(vmIdOrAlias).factory;
  }

  /** True when `vmIdOrAlias` names a registered VM. */
  has(vmIdOrAlias: string | Id): boolean {
    return this.#find(vmIdOrAlias) !== undefined;
  }

  /** Every registered VM, in registration order. */
  list(): VMInfo[] {
    return [...this.#byId.values()].map((e) => ({
      vmId: e.vmId,
      name: e.factory.name,
      version: e.factory.version,
      aliases: [...e.aliases],
      source: e.source,
      ...(e.root ? { root: e.root } : {}),
      ...(e.entry ? { entry: e.entry } : {}),
    }));
  }

  /** Where the code of the VM named by `vmIdOrAlias` lives, when it was loaded from disk. */
  rootOf(vmIdOrAlias: string | Id): string | undefined {
    return this.#find(vmIdOrAlias)?.root;
  }

  #entry(x: string | Id): Entry {
    const entry = this.#find(x);
    if (!entry) throw new VMRegistryError('UnknownVM', `unknown vmID ${typeof x === 'string' ? show(x) : String(x)}`);
    return entry;
  }

  #find(x: string | Id): Entry | undefined {
    if (typeof x !== 'string') {
      try {
        return this.#byId.get(toId(x).key);
      } catch {
        return undefined;
      }
    }
    const key = this.#aliases.get(x);
    if (key !== undefined) return this.#byId.get(key);
    try {
      return this.#byId.get(Id.fromString(x).key);
    } catch {
      return undefined;
    }
  }

  /** The VM that `alias` already names (as a name, alias or its cb58 vmID), if any. */
  #aliasOwner(alias: string): Entry | undefined {
    return this.#find(alias);
  }
}
