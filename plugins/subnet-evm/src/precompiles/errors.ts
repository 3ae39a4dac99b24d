import { NodeError } from '@cornice/sdk';

/**
 * A precompile call failing with subnet-evm's error text (`out of gas`, `write protection`,
 * `non-enabled cannot mint: 0x…`…). The dispatcher turns it into a non-revert failure: the frame
 * consumes all its gas, as geth does for a precompile's error.
 */
export class PrecompileHalt extends NodeError<'PrecompileHalt'> {
  constructor(message: string) {
    super('PrecompileHalt', message);
  }
}

export type PrecompileRegistryErrorCode = 'ReservedAddress' | 'DuplicateKey' | 'DuplicateAddress' | 'InvalidModule';

/** registerPrecompile refused a module (address outside the reserved ranges, a key or address taken…). */
export class PrecompileRegistryError extends NodeError<PrecompileRegistryErrorCode> {}
