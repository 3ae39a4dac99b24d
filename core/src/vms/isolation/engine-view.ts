/**
 * The engine's block tree as a VM's worker sees it go by (`--vm-isolation`), so that the worker can
 * tell whether the engine will verify a block it has just had built: then it verifies it at once and
 * answers both in one message (worker-main.ts, buildBlock).
 *
 * The engine issues a built block by checking it against its tree (snowman/engine.ts, #addOne) and
 * then verifying it, with no VM call in between. The checks use only what crossed this worker: the
 * last block accepted (the engine's root), the blocks verified and not yet accepted or rejected (its
 * processing blocks) and recently decided ones (accepted, rejected, failed verify). When this view
 * cannot tell (no accept seen yet, a parent it does not know), `willVerify` says no and the engine's
 * own verify crosses as before; so it may miss a case, never claim one the engine would skip.
 */

interface Known {
  key: string;
  height: number;
}

/** Decided keys remembered (more than the engine's maxRecentlyDecided, 4096, so none is forgotten first here). */
const DECIDED = 8_192;
/** Verified, undecided blocks remembered (the engine holds far fewer processing blocks). */
const VERIFIED = 16_384;

export class EngineView {
  #root: Known | undefined;
  readonly #verified = new Map<string, number>();
  readonly #decided = new Set<string>();

  /** Whether the engine, issuing a block the VM just built, will verify it next. */
  willVerify(key: string, parentKey: string, height: number): boolean {
    const root = this.#root;
    if (!root || key === root.key || this.#verified.has(key) || this.#decided.has(key)) return false;
    if (!Number.isSafeInteger(height) || height <= root.height) return false;
    const parentHeight = parentKey === root.key ? root.height : this.#verified.get(parentKey);
    return parentHeight !== undefined && height === parentHeight + 1;
  }

  verified(key: string, height: number): void {
    if (!Number.isSafeInteger(height)) return;
    this.#verified.delete(key);
    this.#verified.set(key, height);
    if (this.#verified.size > VERIFIED) {
      // Forgotten as decided, so that this view never takes it for a new block.
      this.#decide(this.#verified.keys().next().value!);
    }
  }

  failed(key: string): void {
    this.#decide(key);
  }

  accepted(key: string, height: number): void {
    this.#decide(key);
    this.#root = Number.isSafeInteger(height) ? { key, height } : undefined;
  }

  rejected(key: string): void {
    this.#decide(key);
  }

  /** `key` is no longer a processing block, and never will be again. */
  #decide(key: string): void {
    this.#verified.delete(key);
    this.#decided.delete(key);
    this.#decided.add(key);
    if (this.#decided.size > DECIDED) this.#decided.delete(this.#decided.keys().next().value!);
  }
}
