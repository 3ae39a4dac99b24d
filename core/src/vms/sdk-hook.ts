/**
 * A module resolution hook, run by Node on its loader thread once `useNodeSdkFallback()` registered
 * it. It does one thing: when a module imports `@cornice/sdk` and Node finds no such package for it
 * (a plugin dropped into --plugin-dir without a node_modules of its own), the import gets the
 * node's own copy of the sdk. Every other import, and every plugin that has its own copy, resolves
 * as Node would without the hook.
 */
import type { InitializeHook, ResolveHook } from 'node:module';

export interface SdkHookData {
  /** The `file:` URL of the node's own `@cornice/sdk` entry. */
  sdkUrl: string;
}

let sdkUrl: string | undefined;

export const initialize: InitializeHook<SdkHookData> = (data) => {
  sdkUrl = data.sdkUrl;
};

/** Node's text when a bare specifier names no installed package (not a broken one). */
const NO_SDK_PACKAGE = /Cannot find package '@cornice\/sdk'/;

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown } | null;
    if (
      specifier === '@cornice/sdk' &&
      sdkUrl !== undefined &&
      err?.code === 'ERR_MODULE_NOT_FOUND' &&
      typeof err.message === 'string' &&
      NO_SDK_PACKAGE.test(err.message)
    ) {
      return { url: sdkUrl, format: 'module', shortCircuit: true };
    }
    throw e;
  }
};
