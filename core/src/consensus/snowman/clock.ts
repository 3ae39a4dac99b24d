import type { Clock } from '@cornice/sdk';

/**
 * The node's clock unless a test injects one. A chain context with this clock lets an isolated VM's
 * worker read its own clock, without crossing to the host.
 */
export const SYSTEM_CLOCK: Clock = { now: () => Date.now() };
