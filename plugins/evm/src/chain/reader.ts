/**
 * State reads and eth_call without copying a VM per call (reference evm.md C.6): one long-lived VM
 * whose state manager follows the accepted root; each call runs inside a checkpoint that is
 * reverted, one at a time (a serializer), so no call sees another's writes. Reads at an older block
 * use a fresh state manager at that block's root (no caches; rare).
 */
import { serializer } from '@cornice/sdk';
import type { Common } from '@ethereumjs/common';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { equalsBytes } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { makeVM, stateManagerAt, type BlockHashLookup, type ExecutionHooks } from './executor.js';
import type { StateDB } from './state-db.js';

export interface StateView {
  readonly sm: MerkleStateManager;
  readonly vm: VM;
}

export class StateReader {
  readonly #queue = serializer();
  #current: Uint8Array | undefined;
  #accepted: Uint8Array | undefined;

  private constructor(
    private readonly common: Common,
    private readonly db: StateDB,
    private readonly hooks: ExecutionHooks,
    private readonly blockHash: BlockHashLookup,
    private readonly live: StateView,
  ) {}

  static async create(common: Common, db: StateDB, hooks: ExecutionHooks, blockHash: BlockHashLookup): Promise<StateReader> {
    const sm = await stateManagerAt(common, db, undefined, hooks.trieCacheSize ?? 50_000);
    const vm = await makeVM(common, sm, hooks, blockHash);
    return new StateReader(common, db, hooks, blockHash, { sm, vm });
  }

  /** The accepted state moved: the live view follows at its next use. */
  setAcceptedRoot(root: Uint8Array): void {
    this.#accepted = root;
  }

  /**
   * Runs `fn` on the state at `root`, alone. `fn` must leave the state as it found it (reads, or
   * writes inside a checkpoint it reverts).
   */
  at<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    if (this.#accepted && equalsBytes(root, this.#accepted)) {
      return this.#queue(async () => {
        if (!this.#current || !equalsBytes(this.#current, root)) {
          await this.live.sm.setStateRoot(root);
          this.#current = root;
        }
        return fn(this.live);
      });
    }
    return this.#historical(root, fn);
  }

  async #historical<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    const sm = await stateManagerAt(this.common, this.db, root, 1000);
    const vm = await makeVM(this.common, sm, this.hooks, this.blockHash);
    return fn({ sm, vm });
  }
}
