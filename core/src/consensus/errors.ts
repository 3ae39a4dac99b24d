import { NodeError } from '@cornice/sdk';

/** 'Aborted': a bootstrap stopped by its signal; 'BootstrapFailed': a bootstrap that gave up (the message says why). */
export type ConsensusErrorCode = 'InvalidParams' | 'NotRunning' | 'AlreadyStarted' | 'Aborted' | 'BootstrapFailed';

/** Errors the consensus engine throws to its local callers (never to peers: their input is logged and dropped). */
export class ConsensusError extends NodeError<ConsensusErrorCode> {}
