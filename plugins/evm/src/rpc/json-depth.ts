/**
 * The nesting depth of a JSON text, found before it is parsed. JSON.parse of a 5 MB body of nested
 * brackets holds the event loop for seconds and grows RSS by hundreds of MB (bench/evm-abuse.mjs
 * nested), and such values
 * reached param parsers that recurse (String() of a nested array overflowed the stack: -32603 and an
 * error log line per request). No Ethereum request needs more than a few levels (a batch of
 * eth_getLogs with topic alternatives is 6 deep), so a text nested deeper than the bound is refused
 * unparsed, after one linear scan. Test: rpc-limits.test.ts "deeply nested JSON".
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when arrays and objects in `text` nest more than `maxDepth` levels deep (brackets inside
 * strings do not count). Malformed text is not judged here: JSON.parse says what is wrong with it.
 */
export function nestedDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
