/**
 * A module resolution hook, run by Node on its loader thread once `useNodeSdkFallback()` registered
 * it. It does one thing: when a module imports `@cornice/sdk` (or one of its subpaths, such as
 * `@cornice/sdk/components`) and Node finds no such package for it (a plugin dropped into
 * --plugin-dir without a node_modules of its own), the import gets the node's own copy of the sdk. Every other import, and every plugin that has its own copy, resolves
 * as Node would without the hook.
 */
import type { InitializeHook, ResolveHook } from 'node:module';

export interface SdkHookData {
  /** The `file:` URL of the node's own `@cornice/sdk` entry. */
  sdkUrl: string;
  /** The `file:` URLs of the node's sdk subpath entries, by specifier (`@cornice/sdk/components`). */
  subpathUrls?: Record<string, string>;
}

let entryUrls = new Map<string, string>();

export const initialize: InitializeHook<SdkHookData> = (data) => {
  entryUrls = new Map([['@cornice/sdk', data.sdkUrl], ...Object.entries(data.subpathUrls ?? {})]);
};

/** Node's text when a bare specifier names no installed package (not a broken one). */
const NO_SDK_PACKAGE = /Cannot find package '@cornice\/sdk'/;

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown } | null;
    const url = entryUrls.get(specifier);
    if (
      url !== undefined &&
      err?.code === 'ERR_MODULE_NOT_FOUND' &&
      typeof err.message === 'string' &&
      NO_SDK_PACKAGE.test(err.message)
    ) {
      return { url, format: 'module', shortCircuit: true };
    }
    throw e;
  }
};
