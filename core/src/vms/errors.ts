import { NodeError } from '@cornice/sdk';

export type VMRegistryErrorCode =
  /** No VM has that vmID, name or alias: `unknown vmID <x>`. */
  | 'UnknownVM'
  /** Two factories with the same vmID. */
  | 'DuplicateVM'
  /** The alias (or a factory's name) already names another VM. */
  | 'AliasTaken'
  /** Not a usable alias. */
  | 'BadAlias'
  /** register() was given something that is not a VMFactory. */
  | 'InvalidFactory';

/** VM registry failures. */
export class VMRegistryError extends NodeError<VMRegistryErrorCode> {}

export type VMLoadErrorCode =
  /** The package or file of a plugin does not exist / cannot be resolved. */
  | 'NotFound'
  /** Importing the plugin module threw. */
  | 'ImportFailed'
  /** The module has no `vmFactory` export, or it is not a VMFactory. */
  | 'NoFactory'
  /** A plugin's vmID (or name, or alias) is already taken by another loaded VM. */
  | 'DuplicateVM'
  /** A --plugin-dir entry is named for one vmID and its factory has another. */
  | 'VMIdMismatch'
  /** A --plugin-dir entry is named by neither a vmID nor an alias of the aliases file. */
  | 'BadPluginName'
  /** The plugin directory cannot be read. */
  | 'PluginDir'
  /** The aliases file is unreadable or malformed. */
  | 'BadAliasesFile'
  /** The plugin's declared @cornice/sdk range does not include the node's sdk version. */
  | 'IncompatibleSdk';

/** A start-up failure while loading VM plugins; the message names the plugin, specifier or file. */
export class VMLoadError extends NodeError<VMLoadErrorCode> {
  constructor(code: VMLoadErrorCode, message: string, cause?: unknown) {
    super(code, message);
    if (cause !== undefined) this.cause = cause;
  }
}

export type IsolationErrorCode =
  /** The worker thread running a chain's VM was terminated, exited or crashed. */
  | 'WorkerGone'
  /** A call of an isolated VM did not settle within --vm-call-timeout (its worker is terminated). */
  | 'WorkerTimeout'
  /** Something the VM needs cannot cross to a worker (e.g. a VM without a module file). */
  | 'Unsupported'
  /** The worker got a request it does not know, or about a block, handler or store it does not have. */
  | 'BadRequest'
  /** `--vm-isolation` names a VM that is not loaded, or is malformed. */
  | 'BadIsolation';

/** Failures of a VM running in a worker thread (`--vm-isolation`). */
export class IsolationError extends NodeError<IsolationErrorCode> {}
