import { NodeError } from '@cornice/sdk';

export type ConsensusErrorCode = 'InvalidParams' | 'NotRunning' | 'AlreadyStarted';

/** Errors the consensus engine throws to its local callers (never to peers: their input is logged and dropped). */
export class ConsensusError extends NodeError<ConsensusErrorCode> {}
