import type { Id } from '../ids/id.js';

/**
 * A block of a linear chain, as the consensus engine sees it.
 *
 * The engine guarantees:
 * - `verify()` is called before a block is voted on, and only once its parent was verified or
 *   accepted; a block whose verify throws is dropped and never accepted.
 * - exactly one of `accept()` / `reject()` is called on each verified block, at most once;
 *   `accept()` is called in height order, each block after its parent;
 * - `reject()` is called on every verified block that conflicts with an accepted one.
 * - every call is bounded by the node's `--vm-call-timeout` (default 30 s): a call that has not
 *   settled by then halts the chain (see ChainVM).
 * The VM guarantees:
 * - `id` is a pure function of `bytes` (parseBlock(bytes).id equals id) and `height` = parent's + 1;
 * - `accept()` persists the block and its effects atomically before resolving, so that after a crash
 *   the VM resumes from what it accepted;
 * - `verify()` has no lasting effect on accepted state (it may cache the result).
 */
export interface Block {
  readonly id: Id;
  readonly parentId: Id;
  readonly height: number;
  /** Unix seconds. */
  readonly timestamp: number;
  readonly bytes: Uint8Array;
  /** Throws (a NodeError naming the rule) when the block is invalid on top of its parent. */
  verify(): Promise<void>;
  accept(): Promise<void>;
  reject(): Promise<void>;
}
