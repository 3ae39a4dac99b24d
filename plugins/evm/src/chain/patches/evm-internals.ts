/**
 * A module of @ethereumjs/evm that its package does not export (the interpreter, the opcode table),
 * loaded by file: the same ESM module the package itself uses, so patching what it exports reaches
 * every EVM made afterwards.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `path` under the package's `dist/esm` (e.g. `opcodes/functions.js`). */
export async function importEvmInternal<T>(path: string): Promise<T> {
  const cjsIndex = createRequire(import.meta.url).resolve('@ethereumjs/evm');
  return (await import(pathToFileURL(join(dirname(cjsIndex), '..', 'esm', ...path.split('/'))).href)) as T;
}

/** What is already wrapped, per Interpreter method (a module's state, so each is wrapped once). */
const wrapped = new Map<string, Promise<boolean>>();

/**
 * Replaces `method` of @ethereumjs' (unexported) Interpreter prototype with `wrap(original)`, once
 * per process. Resolves false when the interpreter or the method is not where this version keeps
 * them: nothing changes then.
 */
export function wrapInterpreterMethod<F extends (...args: never[]) => unknown>(method: string, wrap: (original: F) => F): Promise<boolean> {
  let done = wrapped.get(method);
  if (!done) {
    done = (async () => {
      try {
        const mod = await importEvmInternal<{ Interpreter?: { prototype: Record<string, unknown> } }>('interpreter.js');
        const proto = mod.Interpreter?.prototype;
        const original = proto?.[method];
        if (!proto || typeof original !== 'function') return false;
        proto[method] = wrap(original as F);
        return true;
      } catch {
        return false;
      }
    })();
    wrapped.set(method, done);
  }
  return done;
}
