/**
 * The project name: a valid name for a new npm package (the rules of npm's
 * validate-npm-package-name), whose unscoped part also names the VM, its directory, its service and
 * its chain alias. A VM name is at most 32 bytes: the vmID is the name zero-padded to 32 bytes.
 */
import { builtinModules } from 'node:module';
import { ScaffoldError } from './errors.js';

export const MAX_PACKAGE_NAME_LENGTH = 214;
export const MAX_VM_NAME_BYTES = 32;

export interface ProjectName {
  /** The npm package name, e.g. `@acme/my-vm` or `my-vm`. */
  packageName: string;
  /** The name without its scope: the VM's name and the directory it is written to. */
  vmName: string;
}

const SCOPED = /^@([^/]+)\/([^/]+)$/;
const urlSafe = (s: string): boolean => encodeURIComponent(s) === s;

/** Checks `name`; ScaffoldError('InvalidName') saying what is wrong. */
export function parseProjectName(name: string): ProjectName {
  const bad = (why: string): never => {
    throw new ScaffoldError('InvalidName', `invalid name "${name.slice(0, 64)}${name.length > 64 ? '…' : ''}": ${why}`);
  };
  if (name.length === 0) bad('it is empty');
  if (name.trim() !== name) bad('it has leading or trailing spaces');
  if (name.length > MAX_PACKAGE_NAME_LENGTH) bad(`an npm package name is at most ${MAX_PACKAGE_NAME_LENGTH} characters`);
  if (name.startsWith('.') || name.startsWith('_')) bad("it must not start with '.' or '_'");
  if (name.toLowerCase() !== name) bad('an npm package name is lowercase');
  const scoped = SCOPED.exec(name);
  const vmName = scoped ? scoped[2]! : name;
  if (scoped ? !urlSafe(scoped[1]!) || !urlSafe(vmName) : !urlSafe(name)) bad("it must be URL-safe: lowercase letters, digits, '-', '.' and '_' (and one @scope/ before the name)");
  if (/[~'!()*]/.test(vmName)) bad("it must not contain ~'!()*");
  if (vmName.startsWith('.') || vmName.startsWith('_')) bad("the name after the scope must not start with '.' or '_'");
  if (vmName === 'node_modules' || vmName === 'favicon.ico') bad(`"${vmName}" is a reserved name`);
  if (!scoped && builtinModules.includes(name)) bad(`"${name}" is a Node.js core module name`);
  const bytes = new TextEncoder().encode(vmName).length;
  if (bytes > MAX_VM_NAME_BYTES) bad(`the VM name "${vmName}" is ${bytes} bytes; at most ${MAX_VM_NAME_BYTES} (its vmID is the name zero-padded to 32 bytes)`);
  return { packageName: name, vmName };
}
