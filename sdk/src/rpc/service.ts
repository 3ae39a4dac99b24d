/**
 * Services are declared once with `defineService`: names, param parsers and result types. The same
 * declaration yields the server binding (`bindService`, which core mounts on its JSON-RPC layer), a
 * typed client (`createClient` in client.ts), and the method list used by docs and conformance sweeps.
 * Nothing here depends on an HTTP or JSON-RPC library.
 */
import { InvalidParamsError } from '../errors/errors.js';
import type { Parser } from './params.js';

/** Phantom marker carrying a method's result type. */
export interface ResultType<R> {
  readonly __result?: R;
}
export const result = <R>(): ResultType<R> => ({});

export interface MethodDef<P, R> {
  readonly params: Parser<P>;
  readonly result: ResultType<R>;
  /** One line for docs. */
  readonly doc?: string;
}

export function method<P, R>(def: { params: Parser<P>; result: ResultType<R>; doc?: string }): MethodDef<P, R> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
// biome-ignore lint/suspicious/noExplicitAny: methods of any params and result types (MethodDef is invariant in them)
export type AnyMethods = Record<string, MethodDef<any, any>>;

export interface ServiceDef<M extends AnyMethods = AnyMethods> {
  /** The JSON-RPC namespace, e.g. `admin` for `admin.getNodeID`. */
  readonly name: string;
  readonly methods: M;
}

/**
 * Declares a service. Every method's params must be an object parser (`p.object(...)` or
 * `p.none()`): JSON-RPC params are an object (or a one-element array holding it), so a method
 * declared otherwise could never be called; it is refused here, with a TypeError naming it.
 */
export function defineService<M extends AnyMethods>(name: string, methods: M): ServiceDef<M> {
  checkMethods(name, methods);
  return { name, methods };
}

function checkMethods(service: string, methods: AnyMethods): void {
  if (methods === null || typeof methods !== 'object') throw new TypeError(`service ${service}: methods must be an object`);
  for (const [name, m] of Object.entries(methods)) {
    const params = (m as Partial<MethodDef<unknown, unknown>> | undefined)?.params;
    if (params === null || typeof params !== 'object' || typeof params.parse !== 'function') {
      throw new TypeError(`service ${service}: method ${name} has no params parser (use p.object({...}) or p.none())`);
    }
    if (params.kind !== 'object') {
      throw new TypeError(`service ${service}: method ${name} declares params as ${params.kind}; params must be an object parser (p.object({...}) or p.none())`);
    }
  }
}

export type ParamsOf<D> = D extends MethodDef<infer P, unknown> ? P : never;
export type ResultOf<D> = D extends MethodDef<unknown, infer R> ? R : never;

/** The implementation of a service: one async function per declared method. */
export type Handlers<S extends ServiceDef> = {
  [K in keyof S['methods']]: (params: ParamsOf<S['methods'][K]>) => Promise<ResultOf<S['methods'][K]>>;
};

/** A method ready to serve: takes the raw JSON `params` and returns the result object. */
export type BoundMethod = (rawParams: unknown) => Promise<unknown>;

export interface BoundService {
  readonly def: ServiceDef;
  /** Full method names (`admin.getNodeID`) to bound methods. */
  readonly methods: ReadonlyMap<string, BoundMethod>;
}

/**
 * Params may be an object, a one-element array holding the object, or omitted/null (= `{}`).
 */
export function normalizeParams(raw: unknown): unknown {
  if (raw === undefined || raw === null) return {};
  if (Array.isArray(raw)) {
    if (raw.length === 0) return {};
    if (raw.length === 1) return raw[0] ?? {};
    throw new InvalidParamsError('params', 'must be an object or an array holding one object');
  }
  return raw;
}

export function bindService<S extends ServiceDef>(def: S, handlers: Handlers<S>): BoundService {
  checkMethods(def.name, def.methods); // a declaration written by hand, not through defineService
  const methods = new Map<string, BoundMethod>();
  for (const [name, m] of Object.entries(def.methods)) {
    const impl = (handlers as Record<string, (p: unknown) => Promise<unknown>>)[name];
    if (!impl) throw new TypeError(`service ${def.name}: no handler for ${name}`);
    methods.set(`${def.name}.${name}`, async (raw) => {
      const params = normalizeParams(raw);
      if (params === null || typeof params !== 'object' || Array.isArray(params)) {
        throw new InvalidParamsError('params', 'must be an object or an array holding one object');
      }
      return impl.call(handlers, m.params.parse(params, ''));
    });
  }
  return { def, methods };
}
