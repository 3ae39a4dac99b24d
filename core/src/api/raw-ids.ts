/**
 * The source text of each request's `id` in a JSON-RPC body, so a reply can echo the id exactly:
 * JSON.parse turns 12345678901234567890 into …7000, 1e400 into Infinity (written back as null) and
 * 1.50 into 1.5, and Node 20 gives no access to a number's source text.
 *
 * Call it only on text JSON.parse accepted: the scan relies on the text being well-formed JSON. It
 * is one linear pass without recursion (deep nesting is skipped by counting brackets), and it reads
 * members only at the top level of each request object, so "id" inside params or strings is ignored.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/**
 * For a single request object: one entry, its id's source text (undefined when it has no id). For
 * a batch: one entry per element (undefined for elements that are not objects or have no id).
 * Anything else: no entries.
 */
export function rawIds(text: string): Array<string | undefined> {
  let i = skipSpace(text, 0);
  const first = text.charCodeAt(i);
  if (first === LBRACE) return [objectId(text, i).id];
  if (first !== LBRACKET) return [];
  const out: Array<string | undefined> = [];
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === RBRACKET) return out;
  while (i < text.length) {
    if (text.charCodeAt(i) === LBRACE) {
      const o = objectId(text, i);
      out.push(o.id);
      i = o.end;
    } else {
      out.push(undefined);
      i = valueEnd(text, i);
    }
    i = skipSpace(text, i);
    if (text.charCodeAt(i) !== COMMA) break;
    i = skipSpace(text, i + 1);
  }
  return out;
}

/** The last top-level `id` member of the object starting at `start`, and where the object ends. */
function objectId(text: string, start: number): { id: string | undefined; end: number } {
  let id: string | undefined;
  let i = skipSpace(text, start + 1);
  if (text.charCodeAt(i) === RBRACE) return { id, end: i + 1 };
  while (i < text.length) {
    const keyEnd = stringEnd(text, i);
    const key = text.slice(i, keyEnd);
    // Keys may be written with escapes ("\u0069d"); JSON.parse would read them as "id".
    const isId = key === '"id"' || (key.includes('\\') && JSON.parse(key) === 'id');
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) break;
    const valueStart = skipSpace(text, i + 1);
    i = valueEnd(text, valueStart);
    if (isId) id = text.slice(valueStart, i);
    i = skipSpace(text, i);
    if (text.charCodeAt(i) !== COMMA) break;
    i = skipSpace(text, i + 1);
  }
  return { id, end: text.charCodeAt(i) === RBRACE ? i + 1 : i };
}

/** The index just after the JSON value starting at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (d === QUOTE) {
        i = stringEnd(text, i);
        continue;
      }
      if (d === LBRACE || d === LBRACKET) depth++;
      else if ((d === RBRACE || d === RBRACKET) && --depth === 0) return i + 1;
      i++;
    }
    return i;
  }
  // A number, true, false or null: up to the next delimiter.
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === RBRACE || d === RBRACKET || isSpace(d)) break;
    i++;
  }
  return i;
}

/** The index just after the string starting (with its quote) at `i`. */
function stringEnd(text: string, i: number): number {
  for (;;) {
    const quote = text.indexOf('"', i + 1);
    if (quote < 0) return text.length;
    // The quote ends the string unless an odd run of backslashes escapes it. Each run is counted
    // once (the quote after it stops the count), so this stays linear.
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote + 1;
    i = quote;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}
