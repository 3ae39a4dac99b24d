/**
 * Snow consensus parameters (the `--snow-*` flags) and their validation. The flag names in the
 * problem texts are the node's CLI flags, so a config layer can show them to the operator as they are.
 */
export interface SnowParams {
  /** `--snow-sample-size`: validators sampled (stake-weighted, with replacement) per poll. */
  k: number;
  /** `--snow-quorum-size`: votes a choice needs in one poll for the poll to count as successful. */
  alpha: number;
  /** `--snow-virtuous-commit-threshold`: consecutive successful polls to finalize a choice that never had a conflict. */
  betaVirtuous: number;
  /** `--snow-rogue-commit-threshold`: consecutive successful polls to finalize once conflicting choices exist. */
  betaRogue: number;
  /** `--snow-concurrent-repolls`: polls kept in flight while blocks are processing. */
  concurrentRepolls: number;
}

export const DEFAULT_SNOW_PARAMS: Readonly<SnowParams> = Object.freeze({
  k: 20,
  alpha: 15,
  betaVirtuous: 20,
  betaRogue: 30,
  concurrentRepolls: 4,
});

const FLAGS: Record<keyof SnowParams, string> = {
  k: '--snow-sample-size (k)',
  alpha: '--snow-quorum-size (alpha)',
  betaVirtuous: '--snow-virtuous-commit-threshold (betaVirtuous)',
  betaRogue: '--snow-rogue-commit-threshold (betaRogue)',
  concurrentRepolls: '--snow-concurrent-repolls (concurrentRepolls)',
};

/**
 * The first problem with `p`, as a text naming the flags and the values given; undefined when the
 * parameters are valid: every value a safe integer, k >= 1, k/2 < alpha <= k,
 * 0 < betaVirtuous <= betaRogue, 0 < concurrentRepolls <= betaRogue.
 */
export function snowParamsProblem(p: SnowParams): string | undefined {
  for (const name of Object.keys(FLAGS) as Array<keyof SnowParams>) {
    const v = p[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
      return `${FLAGS[name]} must be an integer: got ${name}=${String(v)}`;
    }
  }
  const { k, alpha, betaVirtuous, betaRogue, concurrentRepolls } = p;
  if (k < 1) return `${FLAGS.k} must be at least 1: got k=${k}`;
  if (!(2 * alpha > k && alpha <= k)) {
    return `${FLAGS.alpha} must be greater than half of --snow-sample-size (k) and at most k: got alpha=${alpha}, k=${k}`;
  }
  if (!(betaVirtuous > 0 && betaVirtuous <= betaRogue)) {
    return `${FLAGS.betaVirtuous} must be greater than 0 and at most --snow-rogue-commit-threshold (betaRogue): got betaVirtuous=${betaVirtuous}, betaRogue=${betaRogue}`;
  }
  if (!(concurrentRepolls > 0 && concurrentRepolls <= betaRogue)) {
    return `${FLAGS.concurrentRepolls} must be greater than 0 and at most --snow-rogue-commit-threshold (betaRogue): got concurrentRepolls=${concurrentRepolls}, betaRogue=${betaRogue}`;
  }
  return undefined;
}
