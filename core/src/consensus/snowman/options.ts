/**
 * What the Snowman engine is given (`SnowmanEngineOptions`, `EngineLimits`) and what it reports
 * (`EngineStats`), shared by its parts (engine.ts, polls.ts, ancestors.ts, builder.ts, frontier.ts),
 * and the small helpers they all use on blocks from a VM.
 */
import type { Block, ChainVM, Logger, ShortId } from '@cornice/sdk';
import type { SnowParams } from '../params.js';
import type { EngineTransport, Reachability, Scheduler, ValidatorSampler } from './types.js';

/** Bounds on the engine's bookkeeping. */
export interface EngineLimits {
  /** Blocks held while their parent is fetched (oldest evicted beyond this). */
  maxHeldBlocks: number;
  /** How long a held block waits for its parent. */
  heldTtlMs: number;
  /** Outstanding Get requests. */
  maxOutstandingGets: number;
  /** How long a Get may stay unanswered before the block may be asked again (default: the query timeout). */
  getTimeoutMs: number;
  /** IDs of recently decided or dropped blocks remembered (so votes for them are not fetched again). */
  maxRecentlyDecided: number;
  /** Backoff after a failed build: the first delay, doubled per consecutive failure up to the max. */
  buildBackoffMinMs: number;
  buildBackoffMaxMs: number;
  /** While too little stake is reachable: how often to look again, and how often to say so in the log. */
  waitRecheckMs: number;
  waitLogIntervalMs: number;
  /**
   * A block whose verify failed is not verified again for this long (then it may be: a verify can
   * fail for a while and then pass, e.g. a timestamp a little ahead of this node's clock).
   */
  failedVerifyTtlMs: number;
  /**
   * Pacing of polls while nothing progresses (no successful poll, no block added or accepted): after
   * paceAfterMs each poll waits 1/paceSlope of the time stalled beyond it, within paceMinMs..paceMaxMs.
   */
  paceAfterMs: number;
  paceSlope: number;
  paceMinMs: number;
  paceMaxMs: number;
  /**
   * While nothing is processing, how often this node asks one validator for its last accepted block
   * (a PullQuery of our own; the Chits carry the answerer's last accepted block), so that a node that
   * missed blocks hears of them and fetches them.
   */
  frontierGossipMs: number;
  /** How long peers may report accepted blocks above ours, without an accept here, before `stats.behind` says so. */
  behindAfterMs: number;
}

export const DEFAULT_ENGINE_LIMITS: Readonly<EngineLimits> = Object.freeze({
  maxHeldBlocks: 1024,
  heldTtlMs: 60_000,
  maxOutstandingGets: 256,
  getTimeoutMs: 2_000,
  maxRecentlyDecided: 4096,
  buildBackoffMinMs: 100,
  buildBackoffMaxMs: 30_000,
  waitRecheckMs: 1_000,
  waitLogIntervalMs: 60_000,
  failedVerifyTtlMs: 2_000,
  paceAfterMs: 2_000,
  paceSlope: 20,
  paceMinMs: 10,
  paceMaxMs: 1_000,
  frontierGossipMs: 5_000,
  behindAfterMs: 5_000,
});

export interface SnowmanEngineOptions {
  vm: ChainVM;
  params: SnowParams;
  transport: EngineTransport;
  validators: ValidatorSampler;
  nodeId: ShortId;
  scheduler: Scheduler;
  log: Logger;
  /**
   * A poll ends this long after it was sent, whatever answered (default 2000). Each
   * request's own deadline comes from the transport (RequestSender); this bounds the poll as a whole.
   */
  queryTimeoutMs?: number;
  /** Called after each block is accepted, in height order. */
  onAccepted?: (block: Block) => void;
  /** Called once when the engine halts (see halt()). */
  onHalt?: (reason: string) => void;
  /**
   * How long after its parent became preferred this node may build a block at `height` (ms; 0 or
   * absent: at once). Gives each height one proposer first, so that validators holding the same
   * gossiped txs do not all build competing blocks (see chains/proposers.ts).
   */
  proposerDelay?: (height: number) => number;
  /**
   * A poll drawn from this node alone (a one-node network) is answered in the engine, without
   * messages (default true; see Poller in polls.ts). Tests that drive the message flow by hand turn it off.
   */
  directSelfPolls?: boolean;
  limits?: Partial<EngineLimits>;
}

/** 'halted': a VM accept failed (or the chain halted it), so nothing more is decided; stop() still cleans up. */
export type EngineState = 'idle' | 'starting' | 'running' | 'halted' | 'stopping' | 'stopped';

export interface EngineStats {
  state: EngineState;
  lastAcceptedHeight: number;
  /** The last accepted block's ID (cb58), once started. */
  lastAcceptedId: string | undefined;
  processing: number;
  held: number;
  pollsInFlight: number;
  outstandingGets: number;
  /** Processing blocks on the preferred branch. */
  preferredDepth: number;
  rootChildren: number;
  rootConfidence: number;
  rootRogue: boolean;
  /** Polls applied in which some child of the root got alpha votes, and those in which none did. */
  successfulPolls: number;
  failedPolls: number;
  /** Polls sent since start. */
  pollsStarted: number;
  /** Of those, polls of this node alone asked again inside the task of the one before (Poller.record). */
  selfPollsRepeated: number;
  /** Vote weight received, and the part of it that named blocks we did not know (ignored). */
  voteWeight: number;
  unknownVoteWeight: number;
  /** Why the engine halted, when it did. */
  haltReason: string | undefined;
  /** Set while polls are held back because too little stake is reachable. */
  waiting: Reachability | undefined;
  /** When the oldest processing block joined the tree (scheduler ms), if any is processing. */
  oldestProcessingSince: number | undefined;
  /** Consecutive failed builds (reset by a good one). */
  buildFailures: number;
  /** When the last block was accepted (or the engine started), scheduler ms. */
  lastAcceptedAt: number;
  /** Since when the VM has had txs to build (waitForEvent said so) without a block accepted since; undefined when none wait. */
  txsWaitingSince: number | undefined;
  /**
   * Set when peers have reported accepted blocks this node has not accepted, for behindAfterMs
   * without an accept here: the highest such height when known (the blocks are being fetched).
   */
  behind: { peerHeight: number | undefined; forMs: number } | undefined;
  /** Consecutive polls that ended without alpha votes at the root (the next ones are paced). */
  failedPollStreak: number;
}

/** A block's height, or undefined when its VM cannot tell yet (it throws until it knows the parent). */
export function heightOf(block: Block): number | undefined {
  try {
    return block.height;
  } catch {
    return undefined;
  }
}

export const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** A block's ID for a log line, even from a VM whose getter throws. */
export function safeId(block: Block): string {
  try {
    return block.id.toString();
  } catch {
    return '?';
  }
}
