/**
 * Bounds on JSON before it is parsed. JSON.parse has no depth limit: a 1 MiB body of nested
 * arrays parses into hundreds of thousands of levels (holding the event loop, and deep values make
 * every later recursive walk — params parsers, replacers, loggers — a stack overflow waiting to
 * happen). `jsonDepthExceeds` is one linear pass over the text (strings skipped, escapes honoured)
 * that stops at the first level past the limit, so refusing costs less than parsing would.
 *
 * Every core JSON-RPC endpoint runs it (jsonrpc.ts; `--http-max-json-depth`, default 64): a body
 * nested deeper gets -32700 before JSON.parse runs. Plugins may use `parseJsonBounded` for their
 * own endpoints (it would move to the sdk for that: plugins import only the sdk). Test:
 * core/test/api/json-limits.test.ts, test/e2e/api-abuse.test.ts "deeply nested JSON".
 */

export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/** True when arrays and objects in `text` nest deeper than `maxDepth` (`[]` is depth 1). */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to the next quote not escaped by an odd run of backslashes.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === LBRACE || c === LBRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === RBRACE || c === RBRACKET) {
      depth--;
    }
  }
  return false;
}

export class JsonLimitError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** The message of a body refused for its depth (said the same way everywhere). */
export function tooDeepMessage(maxDepth: number): string {
  return `parse error: JSON nested deeper than ${maxDepth} levels (--http-max-json-depth)`;
}

/** JSON.parse with the depth bound first; JsonLimitError(-32700) when too deep or malformed. */
export function parseJsonBounded(text: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): unknown {
  if (jsonDepthExceeds(text, maxDepth)) throw new JsonLimitError(-32700, tooDeepMessage(maxDepth));
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JsonLimitError(-32700, `parse error: ${(e as Error).message}`);
  }
}
