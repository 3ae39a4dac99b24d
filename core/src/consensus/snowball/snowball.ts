/**
 * Snowball over n choices: Snowflake plus preference strength. Every successful poll for a choice
 * raises that choice's strength (its count of successful polls, never reset); the preference is the
 * strongest choice (a choice must exceed the current maximum to take over). Finality is Snowflake's:
 * consecutive successful polls for the same choice. When it finalizes, the finalized choice is the
 * preference. Pure: no I/O, no clock.
 */
import { Snowflake, topChoice, type SnowballParams } from './snowflake.js';

export class Snowball {
  readonly #alpha: number;
  readonly #flake: Snowflake;
  readonly #strength = new Map<string, number>();
  #preference: string;
  #maxStrength = 0;

  constructor(params: SnowballParams, initialChoice: string) {
    this.#alpha = params.alpha;
    this.#flake = new Snowflake(params, initialChoice);
    this.#preference = initialChoice;
  }

  /** Adds a conflicting choice (a no-op for a known one). */
  add(choice: string): void {
    this.#flake.add(choice);
  }

  /** Records one poll's votes (choice -> count); votes for unknown choices are ignored. Returns whether it was successful. */
  recordPoll(votes: ReadonlyMap<string, number>): boolean {
    if (this.#flake.finalized) return false;
    const top = topChoice(this.#flake.choices, votes);
    if (top === undefined || top.count < this.#alpha) {
      this.#flake.recordUnsuccessfulPoll();
      return false;
    }
    const strength = (this.#strength.get(top.choice) ?? 0) + 1;
    this.#strength.set(top.choice, strength);
    if (strength > this.#maxStrength) {
      this.#maxStrength = strength;
      this.#preference = top.choice;
    }
    this.#flake.recordSuccessfulPoll(top.choice);
    return true;
  }

  /** A poll that reached alpha for no choice: the confidence resets (strengths stay). */
  recordUnsuccessfulPoll(): void {
    this.#flake.recordUnsuccessfulPoll();
  }

  /** The strongest choice; once finalized, the finalized choice. */
  get preference(): string {
    return this.#flake.finalized ? this.#flake.preference : this.#preference;
  }

  get finalized(): boolean {
    return this.#flake.finalized;
  }

  /** Consecutive successful polls for the last successful choice. */
  get confidence(): number {
    return this.#flake.confidence;
  }

  get rogue(): boolean {
    return this.#flake.rogue;
  }

  /** Successful polls `choice` got so far. */
  strength(choice: string): number {
    return this.#strength.get(choice) ?? 0;
  }

  get choices(): ReadonlySet<string> {
    return this.#flake.choices;
  }
}
