/**
 * `--vm-isolation`: which loaded VMs run their chains in worker threads. Entries are
 * `<vmID, name or alias>=worker`, or `all` (every VM loaded from a module file).
 */
import { pathToFileURL } from 'node:url';
import type { Logger, VMFactory } from '@cornice/sdk';
import { IsolationError } from '../errors.js';
import type { VMRegistry } from '../registry.js';
import { workerFactory, type WorkerVMOptions } from './host.js';

/** The syntax problem of one entry, or undefined (used by the flag's validation). */
export function isolationEntryProblem(entry: string): string | undefined {
  if (entry === 'all') return undefined;
  const m = /^(.+)=(.*)$/.exec(entry);
  if (!m) return `"${entry.slice(0, 128)}" is neither all nor <vmID or alias>=worker`;
  if (m[2] !== 'worker') return `"${entry.slice(0, 128)}": the only isolation is worker`;
  return undefined;
}

/**
 * Resolves the entries against the loaded VMs and returns how a chain's factory is made: the
 * isolated VMs' factories make WorkerVMs, the others are unchanged. Throws (naming the entry) for a
 * VM that is not loaded or has no module file to run in a worker (one given in code).
 */
export function isolationPlan(
  entries: readonly string[],
  vms: Pick<VMRegistry, 'list' | 'resolve'>,
  o: Omit<WorkerVMOptions, 'moduleUrl'>,
  log: Logger,
): (factory: VMFactory) => VMFactory {
  const files = new Map<string, string>();
  const all = entries.includes('all');
  for (const vm of vms.list()) {
    if (vm.entry) files.set(vm.vmId.key, vm.entry);
  }
  const isolated = new Map<string, string>();
  if (all) for (const [key, file] of files) isolated.set(key, file);
  for (const entry of entries) {
    const problem = isolationEntryProblem(entry);
    if (problem) throw new IsolationError('BadIsolation', `--vm-isolation: ${problem}`);
    if (entry === 'all') continue;
    const name = entry.slice(0, entry.lastIndexOf('='));
    let vmId;
    try {
      vmId = vms.resolve(name).vmId;
    } catch {
      throw new IsolationError('BadIsolation', `--vm-isolation: no loaded VM is named ${name.slice(0, 128)}`);
    }
    const file = files.get(vmId.key);
    if (!file) throw new IsolationError('BadIsolation', `--vm-isolation: VM ${name.slice(0, 128)} was not loaded from a module file, so it cannot run in a worker`);
    isolated.set(vmId.key, file);
  }
  const made = new Map<string, VMFactory>();
  for (const vm of vms.list()) if (isolated.has(vm.vmId.key)) log.info('VM runs in worker threads', { name: vm.name, vmId: vm.vmId.toString() });
  return (factory) => {
    const key = factory.vmId.key;
    const file = isolated.get(key);
    if (file === undefined) return factory;
    let f = made.get(key);
    if (!f) made.set(key, (f = workerFactory(factory, { ...o, moduleUrl: pathToFileURL(file).href })));
    return f;
  };
}
