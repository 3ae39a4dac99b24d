import * as assert from 'uvu/assert';
import type { SimulationOptions, SimulationResult } from '../../../src/testing/simulation.js';
import { runSimulation } from '../../../src/testing/simulation.js';

/**
 * Runs the simulation and asserts SAFETY (no two honest nodes accepted different blocks at one
 * height; the VMs saw no contract breach) and LIVENESS (every honest node accepted at least
 * `targetBlocks` blocks within `maxVirtualMs` of virtual time).
 */
export async function safeAndLive(opts: SimulationOptions): Promise<SimulationResult> {
  const r = await runSimulation(opts);
  const label = `seed ${opts.seed}`;
  assert.equal(r.conflicts, [], `${label}: conflicting accepts`);
  assert.equal(r.violations, [], `${label}: VM contract violations`);
  assert.ok(
    r.reachedTarget,
    `${label}: liveness: accepted ${r.minAccepted}..${r.maxAccepted} of ${opts.targetBlocks} in ${Math.round(r.virtualMs)} virtual ms`,
  );
  assert.ok(r.minAccepted >= opts.targetBlocks);
  assert.ok(r.virtualMs <= (opts.maxVirtualMs ?? Infinity));
  // Every honest chain is a prefix of the longest one.
  const longest = r.chains.reduce((a, b) => (b.length > a.length ? b : a), []);
  for (const c of r.chains) assert.equal(c, longest.slice(0, c.length), `${label}: chains diverge`);
  return r;
}
