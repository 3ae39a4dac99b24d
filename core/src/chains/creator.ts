/**
 * Which chains of the platform state this node runs, and when. The platform VM reports every chain
 * of its accepted state (chainCreated: genesis chains at initialization, then each accepted
 * createBlockchain) and every change of a subnet's current validators (validatorsChanged); this
 * turns them into chain creations:
 * - a chain whose VM this node has not loaded is not run, and a warning names the chain and the VM;
 * - a chain on the Default Subnet always runs;
 * - a chain on another subnet runs only while this node is a current validator of that subnet, and
 *   starts when a later validator change makes it one (an info line says why it waits);
 * - creations run one at a time in the order reported, once start() is called; a creation that fails
 *   is logged and contained (the chain manager has undone it), the node and other chains go on.
 */
import type { Id, Logger, ShortId, Validator } from '@cornice/sdk';
import { PlatformError } from '../platform/errors.js';
import { DEFAULT_SUBNET_ID, type ChainRecord, type PlatformEvents } from '../platform/model.js';
import type { ValidatorSets } from '../validators/validators.js';
import type { VMRegistry } from '../vms/registry.js';
import type { ChainDefinition } from './definition.js';

export interface ChainCreatorDeps {
  nodeId: ShortId;
  vms: { has(vmId: Id): boolean };
  /** The current validators of each subnet: updated here, sampled by the engines. */
  validators: ValidatorSets;
  /** Creates and starts a chain (the chain manager, which undoes a failed creation and throws). */
  create(def: ChainDefinition): Promise<unknown>;
  /** Whether the chain runs already (the platform chain itself). */
  isRunning(chainId: Id): boolean;
  /** A genesis chain's aliases, from the genesis; undefined for chains created at run time. */
  aliasesOf(chainId: Id): { aliases: readonly string[]; endpointAliases: readonly string[] } | undefined;
  log: Logger;
}

export class ChainCreator implements PlatformEvents {
  /** Chain IDs reported so far (a repeated report is ignored). */
  readonly #seen = new Set<string>();
  /** Subnet ID -> chains waiting for this node to validate that subnet, in report order. */
  readonly #waiting = new Map<string, ChainRecord[]>();
  #open!: () => void;
  /** The last queued creation; creations wait for start(). */
  #tail: Promise<void> = new Promise((resolve) => (this.#open = resolve));
  #stopped = false;
  /** Why a chain's creation failed, by chain ID. */
  readonly #failures = new Map<string, string>();

  constructor(private readonly d: ChainCreatorDeps) {}

  /** Lets queued and future creations run. */
  start(): void {
    this.#open();
  }

  /** Resolves once every creation queued so far (and any it led to) has finished or failed. */
  async settled(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.#tail;
      await tail;
    } while (tail !== this.#tail);
  }

  /** Skips what is still queued and waits for a creation in progress (before the chains stop). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#open();
    await this.settled();
  }

  /** Why the chain's creation failed, if it did. */
  failureOf(chainId: Id): string | undefined {
    return this.#failures.get(chainId.toString());
  }

  /** Every chain whose creation failed (and was not created since), with why: chain ID -> error. */
  failures(): ReadonlyMap<string, string> {
    return this.#failures;
  }

  chainCreated(chain: ChainRecord): void {
    const key = chain.id.toString();
    if (this.#seen.has(key) || this.d.isRunning(chain.id)) return;
    this.#seen.add(key);
    const fields = { chain: chain.name, chainId: key };
    if (!this.d.vms.has(chain.vmId)) {
      this.d.log.warn('chain not run: its VM is not loaded', {
        ...fields,
        alias: this.d.aliasesOf(chain.id)?.aliases[0],
        vmId: chain.vmId.toString(),
        vm: vmNameOf(chain.vmId),
      });
      return;
    }
    if (chain.subnetId.equals(DEFAULT_SUBNET_ID) || this.#validates(this.d.validators.listNow(chain.subnetId))) {
      this.#enqueue(chain);
      return;
    }
    this.d.log.info('chain not run: this node does not validate its subnet', { ...fields, subnetId: chain.subnetId.toString() });
    const waiting = this.#waiting.get(chain.subnetId.key) ?? [];
    waiting.push(chain);
    this.#waiting.set(chain.subnetId.key, waiting);
  }

  validatorsChanged(subnetId: Id, validators: readonly Validator[]): void {
    this.d.validators.set(subnetId, validators);
    const waiting = this.#waiting.get(subnetId.key);
    if (!waiting || !this.#validates(validators)) return;
    this.#waiting.delete(subnetId.key);
    for (const chain of waiting) {
      this.d.log.info('chain starting: this node now validates its subnet', {
        chain: chain.name,
        chainId: chain.id.toString(),
        subnetId: subnetId.toString(),
      });
      this.#enqueue(chain);
    }
  }

  #validates(validators: readonly Validator[]): boolean {
    return validators.some((v) => v.nodeId.equals(this.d.nodeId));
  }

  #enqueue(chain: ChainRecord): void {
    this.#tail = this.#tail.then(() => this.#create(chain));
  }

  async #create(chain: ChainRecord): Promise<void> {
    if (this.#stopped || this.d.isRunning(chain.id)) return;
    const names = this.d.aliasesOf(chain.id);
    try {
      await this.d.create({
        id: chain.id,
        name: chain.name,
        subnetId: chain.subnetId,
        vmId: chain.vmId,
        fxIds: chain.fxIds,
        genesis: chain.genesisData,
        aliases: [...(names?.aliases ?? [])],
        endpointAliases: [...(names?.endpointAliases ?? [])],
      });
      this.#failures.delete(chain.id.toString());
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.#failures.set(chain.id.toString(), error);
      this.d.log.error('chain not run: its creation failed', { chain: chain.name, chainId: chain.id.toString(), error });
    }
  }
}

/**
 * The VM lookup of platform.createBlockchain: the vmID of a loaded VM from its vmID or alias;
 * otherwise PlatformError('UnknownVM') naming it and the VMs this node has loaded (but the platform
 * VM, which the platform VM itself refuses to instantiate).
 */
export function creatableVm(vms: Pick<VMRegistry, 'has' | 'resolve' | 'list'>, platformVmId: Id): (vm: string) => Id {
  return (vm) => {
    if (vms.has(vm)) return vms.resolve(vm).vmId;
    const loaded = vms.list().filter((v) => !v.vmId.equals(platformVmId)).map((v) => `${v.name} (${v.vmId.toString()})`);
    const shown = vm.length > 64 ? `${vm.slice(0, 64)}…` : vm;
    throw new PlatformError('UnknownVM', `no VM with ID '${shown}' found; this node has loaded: ${loaded.join(', ') || 'none'}`);
  };
}

/** The VM name a vmID was made from (`timestamp`), when it is a zero-padded printable name. */
export function vmNameOf(vmId: Id): string | undefined {
  const bytes = vmId.bytes;
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  const name = bytes.subarray(0, end);
  return name.length > 0 && name.every((b) => b >= 0x21 && b <= 0x7e) ? new TextDecoder().decode(name) : undefined;
}
