/**
 * Which browsers and host names the HTTP API serves, as avalanchego does:
 * - Host check (DNS rebinding): a request whose Host names a host outside the allowed list is
 *   refused. The port is ignored, names compare case-insensitively, IPv6 is written in brackets.
 *   IP literals always pass — a rebinding page can only present its own domain name — and so does a
 *   request without Host (HTTP/1.0), which a browser never sends. `*` turns the check off.
 * - CORS: only origins in the allowed list get `access-control-allow-origin`; `*` allows any. With
 *   no list (the default) a browser page on another origin can send no JSON-RPC call: the
 *   application/json content type needs a preflight, and the preflight gets no allow headers.
 */
import { isIP } from 'node:net';

const WILDCARD = '*';

/** The host names served by default: the loopback ones. */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** `Host` header -> host name: lower case, without port or IPv6 brackets. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.indexOf(':');
  // One colon separates a port; more mean a bare IPv6 address.
  return colon >= 0 && colon === h.lastIndexOf(':') ? h.slice(0, colon) : h;
}

export class HostCheck {
  readonly #hosts: ReadonlySet<string> | undefined;

  /** `allowed`: host names (a port or brackets are ignored); `*` allows every host. */
  constructor(allowed: readonly string[]) {
    this.#hosts = allowed.includes(WILDCARD) ? undefined : new Set(allowed.map(hostName));
  }

  /** The refused host name, or undefined when the request may be served. */
  refused(header: string | undefined): string | undefined {
    if (this.#hosts === undefined || header === undefined || header === '') return undefined;
    const name = hostName(header);
    return isIP(name) !== 0 || this.#hosts.has(name) ? undefined : name;
  }
}

export class CorsPolicy {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  /** `allowed`: origins such as `https://app.example` or `http://localhost:3000`; `*` allows any. */
  constructor(allowed: readonly string[]) {
    this.#any = allowed.includes(WILDCARD);
    this.#origins = new Set(allowed.map(normalizeOrigin));
  }

  /**
   * Whether a request with this Origin header may be served where no CORS applies (WebSockets):
   * no Origin (not a browser), or an allowed one.
   */
  allows(origin: string | undefined): boolean {
    return origin === undefined || this.#any || this.#origins.has(normalizeOrigin(origin));
  }

  /** Headers for a reply to a request from `origin` (the Origin header); a preflight gets the allow headers too. */
  headers(origin: string | undefined, preflight: boolean): Record<string, string> {
    const out: Record<string, string> = {};
    // Replies differ by Origin whenever only some origins are allowed: caches must know.
    if (!this.#any && this.#origins.size > 0) out.vary = 'origin';
    if (origin === undefined || !(this.#any || this.#origins.has(normalizeOrigin(origin)))) return out;
    out['access-control-allow-origin'] = this.#any ? WILDCARD : origin;
    if (preflight) {
      out['access-control-allow-methods'] = 'POST, OPTIONS';
      out['access-control-allow-headers'] = 'content-type';
      out['access-control-max-age'] = '86400';
    }
    return out;
  }
}

function normalizeOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

/** Flag validation: `*`, or `scheme://host[:port]` (`null` for opaque origins). */
export function originProblem(origin: string): string | undefined {
  return origin === WILDCARD || origin === 'null' || /^[a-z][a-z0-9+.-]*:\/\/[^/\s?#]+\/?$/i.test(origin)
    ? undefined
    : `origins such as https://app.example or http://localhost:3000, or * (got "${origin.slice(0, 64)}")`;
}

/** Flag validation: `*`, a host name, or an IP address (IPv6 optionally in brackets). */
export function hostProblem(host: string): string | undefined {
  const name = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return host === WILDCARD || isIP(name) !== 0 || /^[a-z0-9]([a-z0-9_-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9_-]*[a-z0-9])?)*$/i.test(name)
    ? undefined
    : `host names or IP addresses such as localhost or node.example, or * (got "${host.slice(0, 64)}")`;
}
