/**
 * The health check of one chain (`chain <alias>` in /ext/health): healthy when its engine runs (not
 * still starting, not halted), enough stake is connected and answering for a poll to succeed, no
 * block has been processing longer than `maxProcessingMs`, no tx has waited that long without a
 * block accepted, and peers do not report accepted blocks above this node's for longer than the
 * engine's behindAfterMs. Unhealthy checks throw an Error whose message lists every problem, so the
 * report says what is wrong.
 */
import type { BootstrapProgress } from '../consensus/bootstrap/types.js';
import { answering, canPoll, describeReachability, type SnowParams, type SnowmanEngine, type ValidatorSampler } from '../consensus/index.js';

export interface ChainHealthSource {
  readonly engine: SnowmanEngine;
  readonly sampler: ValidatorSampler;
  /** Set once the chain was halted (a VM fault), with the reason. */
  readonly fault: string | undefined;
  /** While the chain bootstraps: what it has done so far. */
  readonly bootstrapping?: BootstrapProgress | undefined;
}

export class ChainUnhealthy extends Error {
  constructor(readonly problems: string[], readonly details: Record<string, unknown>) {
    super(problems.join('; '));
    this.name = 'ChainUnhealthy';
  }
}

export function chainHealth(c: ChainHealthSource, snow: Pick<SnowParams, 'k' | 'alpha'>, maxProcessingMs: number, now: number): Record<string, unknown> {
  const s = c.engine.stats;
  const problems: string[] = [];
  if (c.fault !== undefined || s.state === 'halted') problems.push(`halted: ${c.fault ?? s.haltReason ?? 'unknown reason'}`);
  else if (c.bootstrapping) problems.push(`bootstrapping: ${describeBootstrap(c.bootstrapping)}`);
  else if (s.state === 'idle' || s.state === 'starting') problems.push('not bootstrapped: the engine is starting');
  else if (s.state !== 'running') problems.push(`engine ${s.state}`);
  const reach = c.sampler.reachability();
  if (!canPoll(reach, snow)) problems.push(`waiting for validators: ${describeReachability(reach, snow)}`);
  else if (!answering(reach, snow)) problems.push(`too few validators answering: ${describeReachability(reach, snow)}`);
  const limit = `limit ${Math.round(maxProcessingMs / 1000)} s`;
  const stuckMs = s.oldestProcessingSince === undefined ? 0 : now - s.oldestProcessingSince;
  if (stuckMs > maxProcessingMs) problems.push(`a block has been processing for ${Math.round(stuckMs / 1000)} s (${limit})`);
  const txsWaitMs = s.txsWaitingSince === undefined ? 0 : now - Math.max(s.txsWaitingSince, s.lastAcceptedAt);
  if (txsWaitMs > maxProcessingMs) problems.push(`transactions have waited ${Math.round(txsWaitMs / 1000)} s and no block was accepted (${limit})`);
  if (s.behind) {
    const where = s.behind.peerHeight === undefined ? 'blocks this node lacks' : `height ${s.behind.peerHeight}`;
    problems.push(`behind: peers have accepted ${where}, this node is at height ${s.lastAcceptedHeight} and has accepted nothing for ${Math.round(s.behind.forMs / 1000)} s (fetching)`);
  }
  const details = {
    state: s.state,
    lastAcceptedHeight: s.lastAcceptedHeight,
    ...(s.lastAcceptedId !== undefined ? { lastAccepted: s.lastAcceptedId } : {}),
    polls: { successful: s.successfulPolls, failed: s.failedPolls },
    processing: s.processing,
    longestProcessingMs: stuckMs,
    validators: describeReachability(reach, snow),
    ...(s.buildFailures > 0 ? { buildFailures: s.buildFailures } : {}),
    ...(s.behind ? { behind: s.behind } : {}),
  };
  if (problems.length > 0) throw new ChainUnhealthy(problems, details);
  return details;
}

/** One line on a bootstrap's progress, e.g. `fetching: 1200 blocks fetched, 800 accepted, height 800 of 5000, about 3 s left`. */
export function describeBootstrap(p: BootstrapProgress): string {
  const target = p.targetHeight === undefined ? '' : ` of ${p.targetHeight}`;
  const eta = p.etaMs === undefined ? '' : `, about ${Math.ceil(p.etaMs / 1000)} s left`;
  return `${p.phase}: ${p.fetched} blocks fetched, ${p.accepted} accepted, height ${p.height}${target}${eta}`;
}
