/**
 * The npm packages of the VMs that ship with Cornice. Without `--vms`, a node loads every one of them
 * that is installed (a missing one is skipped with a log line); `--vms` replaces the list.
 */
export const BUILTIN_VM_PACKAGES: readonly string[] = ['@cornice/avm', '@cornice/evm', '@cornice/subnet-evm', '@cornice/timestamp'];
