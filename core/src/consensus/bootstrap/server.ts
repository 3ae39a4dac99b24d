/**
 * The answering half of bootstrapping: what this node tells other nodes that bootstrap from it,
 * straight from its VM (it answers while it bootstraps itself too: beacons restarting together
 * bootstrap from each other).
 *
 * - GetAcceptedFrontier -> our last accepted block (a linear chain's frontier is one block).
 * - GetAccepted(ids) -> those of the IDs (at most MAX_CONTAINER_IDS are looked at) that this VM has
 *   accepted: a block the VM knows whose height maps back to it in the height index.
 * - GetAncestors(id) -> that block, its parent, its grandparent… newest first, while the VM has them
 *   (processing or accepted), at most MAX_ANCESTORS blocks, and stopping before the reply would pass
 *   MAX_MESSAGE_BYTES, and stopping once gathering it took `maxAncestorsMs` (avalanchego's
 *   MaxTimeGetAncestors: one request's work is bounded in time too, whatever the VM's reads cost;
 *   the block asked for is always included). An unknown block gets an empty reply, so the asker
 *   turns to another beacon at once instead of waiting for its deadline (the same for a first block
 *   too big to fit a message). How many requests a peer may make, and their reply bytes, is the
 *   network's request budget (network/request-budget.ts).
 *
 * Nothing here throws: bad input and VM failures are logged at debug and answered as far as possible.
 */
import { Id, type Block, type ChainVM, type Logger, type ShortId } from '@cornice/sdk';
import { MAX_ANCESTORS, MAX_CONTAINER_IDS, MAX_MESSAGE_BYTES } from '../limits.js';
import type { BootstrapTarget, BootstrapTransport } from './types.js';

/**
 * Room left in an Ancestors frame for everything but the blocks: codec version (2), op (1), chain
 * ID (32), request ID (4) and the count (4) are 43 bytes; each block also costs its u32 length.
 */
export const ANCESTORS_HEADER_BYTES = 64;
export const ANCESTORS_BYTES_PER_BLOCK = 4;

export interface BootstrapServerLimits {
  /** Most blocks in one Ancestors reply. */
  maxAncestors: number;
  /** Most bytes of one Ancestors reply, each block counted with its length prefix. */
  maxAncestorsBytes: number;
  /** Longest time spent gathering one Ancestors reply (ms); the blocks gathered by then are sent. */
  maxAncestorsMs: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<BootstrapServerLimits> = Object.freeze({
  maxAncestors: MAX_ANCESTORS,
  maxAncestorsBytes: MAX_MESSAGE_BYTES - ANCESTORS_HEADER_BYTES,
  maxAncestorsMs: 250,
});

export interface BootstrapServerOptions {
  vm: ChainVM;
  transport: BootstrapTransport;
  log: Logger;
  limits?: Partial<BootstrapServerLimits>;
  /** The clock maxAncestorsMs is measured on (ms; default performance.now). */
  now?: () => number;
}

/** The requests of BootstrapTarget (the replies go to a Bootstrapper). */
export type BootstrapRequestHandler = Pick<BootstrapTarget, 'onGetAcceptedFrontier' | 'onGetAccepted' | 'onGetAncestors'>;

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

export class BootstrapServer implements BootstrapRequestHandler {
  readonly #vm: ChainVM;
  readonly #transport: BootstrapTransport;
  readonly #log: Logger;
  readonly #limits: BootstrapServerLimits;
  readonly #now: () => number;

  constructor(opts: BootstrapServerOptions) {
    this.#vm = opts.vm;
    this.#transport = opts.transport;
    this.#log = opts.log;
    this.#limits = { ...DEFAULT_SERVER_LIMITS, ...opts.limits };
    this.#now = opts.now ?? (() => performance.now());
  }

  async onGetAcceptedFrontier(from: ShortId, requestId: number): Promise<void> {
    try {
      const last = await this.#vm.lastAccepted();
      this.#transport.acceptedFrontier(from, requestId, [last]);
    } catch (err) {
      this.#log.debug('get accepted frontier not answered', { from: String(from), error: describe(err) });
    }
  }

  async onGetAccepted(from: ShortId, requestId: number, blockIds: readonly Id[]): Promise<void> {
    try {
      const ids = Array.isArray(blockIds) ? blockIds.slice(0, MAX_CONTAINER_IDS) : [];
      const seen = new Set<string>();
      const accepted: Id[] = [];
      for (const id of ids) {
        if (!(id instanceof Id) || seen.has(id.key)) continue;
        seen.add(id.key);
        if (await isAccepted(this.#vm, id)) accepted.push(id);
      }
      this.#transport.accepted(from, requestId, accepted);
    } catch (err) {
      this.#log.debug('get accepted not answered', { from: String(from), error: describe(err) });
    }
  }

  async onGetAncestors(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    try {
      const blocks = blockId instanceof Id ? await this.#ancestors(blockId) : [];
      this.#transport.ancestors(from, requestId, blocks);
    } catch (err) {
      this.#log.debug('get ancestors not answered', { from: String(from), error: describe(err) });
    }
  }

  /**
   * The block and its ancestors, newest first, within the count and byte limits. Processing blocks
   * are followed parent by parent; once the walk reaches an accepted block, the rest is the accepted
   * chain below it, read by height PREFETCH_WINDOW blocks at a time (concurrent reads: one at a time,
   * each store read waits its own round trip to the database's threads, 5-10x slower).
   */
  async #ancestors(blockId: Id): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    const budget = { bytes: 0, until: this.#now() + this.#limits.maxAncestorsMs };
    let next: Id = blockId;
    while (out.length < this.#limits.maxAncestors) {
      let block: Block;
      try {
        block = await this.#vm.getBlock(next);
      } catch {
        return out; // unknown here (below genesis, or never seen)
      }
      if (!this.#take(out, budget, block)) return out;
      const height = knownHeight(block);
      if (height !== undefined && (await acceptedAt(this.#vm, height, block.id))) {
        await this.#acceptedBelow(out, budget, block, height);
        return out;
      }
      next = block.parentId;
    }
    return out;
  }

  /** Appends the accepted blocks below `top` (at `height`), newest first, while they fit. */
  async #acceptedBelow(out: Uint8Array[], budget: Budget, top: Block, height: number): Promise<void> {
    let child = top;
    for (let h = height - 1; h >= 0 && out.length < this.#limits.maxAncestors && this.#now() <= budget.until; ) {
      const n = Math.min(PREFETCH_WINDOW, h + 1, this.#limits.maxAncestors - out.length);
      const window = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          this.#vm.getBlockIdAtHeight(h - i).then(
            (id) => this.#vm.getBlock(id),
            () => undefined,
          ),
        ),
      );
      for (const block of window) {
        // The height index must agree with the parent links (it does unless the VM is broken).
        if (!block?.id.equals(child.parentId) || !this.#take(out, budget, block)) return;
        child = block;
      }
      h -= n;
    }
  }

  /** Adds `block` to the reply if it fits the byte limit and the time is not up (the first block always gets in on time). */
  #take(out: Uint8Array[], budget: Budget, block: Block): boolean {
    const bytes = block.bytes;
    const size = bytes.length + ANCESTORS_BYTES_PER_BLOCK;
    if (budget.bytes + size > this.#limits.maxAncestorsBytes) return false;
    if (out.length > 0 && this.#now() > budget.until) return false;
    out.push(bytes);
    budget.bytes += size;
    return true;
  }
}

/** What one Ancestors reply has used: bytes so far, and the time it must be done by. */
interface Budget {
  bytes: number;
  until: number;
}

/** Blocks read at once when serving accepted ancestors by height. */
const PREFETCH_WINDOW = 64;

/** The block's height when the VM knows it (some VMs only know it once the parent is known). */
export function knownHeight(block: Block): number | undefined {
  try {
    const h = block.height;
    return Number.isSafeInteger(h) && h >= 0 ? h : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the accepted block at `height` is `id`. */
async function acceptedAt(vm: ChainVM, height: number, id: Id): Promise<boolean> {
  try {
    return (await vm.getBlockIdAtHeight(height)).equals(id);
  } catch {
    return false;
  }
}

/** Whether `vm` has accepted the block `id`: it knows the block, and its height index names it. */
export async function isAccepted(vm: ChainVM, id: Id): Promise<boolean> {
  try {
    const block = await vm.getBlock(id);
    return await acceptedAt(vm, block.height, id);
  } catch {
    return false; // unknown, or a height not known yet
  }
}
