/**
 * The native token's methods under its symbol: every `…NATIVE` method of a service is also served as
 * `…<SYMBOL>` (`avm.exportNATIVE` as `avm.exportAVA` when the symbol is `AVA`), as the reference node
 * named them. A symbol that is not 1 to 16 letters or digits, or is `NATIVE` itself, adds nothing.
 */
import { defineService, type MethodDef, type ServiceDef } from './service.js';

const NATIVE = 'NATIVE';

/** The alias each `…NATIVE` method name gets for `symbol`, e.g. exportNATIVE -> exportAVA. */
function aliasesOf(names: readonly string[], symbol: string): Array<[alias: string, name: string]> {
  if (!/^[A-Za-z0-9]{1,16}$/.test(symbol) || symbol === NATIVE) return [];
  return names.filter((n) => n.endsWith(NATIVE)).map((n) => [n.slice(0, -NATIVE.length) + symbol, n]);
}

/** The names `exportNATIVE` and `importNATIVE` take for `symbol` (none for an unusable symbol). */
export function nativeMethodAliases(symbol: string): string[] {
  return aliasesOf(['exportNATIVE', 'importNATIVE'], symbol).map(([alias]) => alias);
}

/** The declaration with each `…NATIVE` method also under the symbol's name. */
export function withNativeAliases(def: ServiceDef, symbol: string): ServiceDef {
  const methods: Record<string, MethodDef<unknown, unknown>> = { ...def.methods };
  for (const [alias, name] of aliasesOf(Object.keys(def.methods), symbol)) methods[alias] = methods[name]!;
  return defineService(def.name, methods);
}

/** The handlers with each `…NATIVE` handler also under the symbol's name (to bind to withNativeAliases' declaration). */
export function withNativeAliasHandlers<H extends object>(handlers: H, symbol: string): H {
  const all = { ...handlers } as Record<string, unknown>;
  for (const [alias, name] of aliasesOf(Object.keys(handlers), symbol)) all[alias] = all[name];
  return all as H;
}
