/**
 * Snowflake over n choices: a pure state machine (no I/O, no clock).
 *
 * A poll is successful when one known choice got at least `alpha` votes. Each successful poll for
 * the current preference raises the confidence by one; a successful poll for another choice makes
 * that choice preferred with confidence 1; an unsuccessful poll resets the confidence to 0. The
 * instance finalizes when the confidence reaches `betaVirtuous` while only one choice was ever added,
 * or `betaRogue` once a conflicting choice was added. A finalized instance ignores further input.
 */
export interface SnowballParams {
  alpha: number;
  betaVirtuous: number;
  betaRogue: number;
}

/** The choice with the most votes among `choices` (first added wins a tie), with its count. */
export function topChoice(
  choices: ReadonlySet<string>,
  votes: ReadonlyMap<string, number>,
): { choice: string; count: number } | undefined {
  let best: { choice: string; count: number } | undefined;
  for (const [choice, count] of votes) {
    if (!choices.has(choice) || !(count > 0)) continue;
    if (best === undefined || count > best.count) best = { choice, count };
  }
  return best;
}

export class Snowflake {
  readonly #alpha: number;
  readonly #betaVirtuous: number;
  readonly #betaRogue: number;
  readonly #choices = new Set<string>();
  #preference: string;
  #confidence = 0;
  #finalized = false;

  constructor(params: SnowballParams, initialChoice: string) {
    this.#alpha = params.alpha;
    this.#betaVirtuous = params.betaVirtuous;
    this.#betaRogue = params.betaRogue;
    this.#choices.add(initialChoice);
    this.#preference = initialChoice;
  }

  /** Adds a conflicting choice (a no-op for a known one); two or more choices make the instance rogue. */
  add(choice: string): void {
    this.#choices.add(choice);
  }

  /** Records one poll's votes (choice -> count); votes for unknown choices are ignored. Returns whether it was successful. */
  recordPoll(votes: ReadonlyMap<string, number>): boolean {
    const top = topChoice(this.#choices, votes);
    if (top === undefined || top.count < this.#alpha) {
      this.recordUnsuccessfulPoll();
      return false;
    }
    this.recordSuccessfulPoll(top.choice);
    return true;
  }

  /** A poll in which `choice` (a known choice) reached alpha. */
  recordSuccessfulPoll(choice: string): void {
    if (this.#finalized || !this.#choices.has(choice)) return;
    if (choice !== this.#preference) {
      this.#preference = choice;
      this.#confidence = 0;
    }
    this.#confidence += 1;
    if (this.#confidence >= (this.rogue ? this.#betaRogue : this.#betaVirtuous)) this.#finalized = true;
  }

  /** A poll in which no choice reached alpha: the confidence resets. */
  recordUnsuccessfulPoll(): void {
    if (!this.#finalized) this.#confidence = 0;
  }

  get preference(): string {
    return this.#preference;
  }

  /** Consecutive successful polls for the current preference. */
  get confidence(): number {
    return this.#confidence;
  }

  get finalized(): boolean {
    return this.#finalized;
  }

  /** True once more than one choice was added (betaRogue applies). */
  get rogue(): boolean {
    return this.#choices.size > 1;
  }

  get choices(): ReadonlySet<string> {
    return this.#choices;
  }
}
