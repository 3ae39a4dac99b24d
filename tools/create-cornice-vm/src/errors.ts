export type ScaffoldErrorCode =
  /** The name is not a valid npm package name, or too long for a VM name. */
  | 'InvalidName'
  /** The target directory exists and is not empty. */
  | 'TargetNotEmpty'
  /** Bad command-line arguments. */
  | 'Usage';

/** Every error the generator throws on purpose; the CLI prints its message and exits 1. */
export class ScaffoldError extends Error {
  constructor(
    readonly code: ScaffoldErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ScaffoldError';
  }
}
