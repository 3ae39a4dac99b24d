/**
 * The keystore's typed errors, and Go-style `%q` quoting for the reference texts that quote a
 * username. Messages never contain a password or key material.
 */
import { NodeError } from '@cornice/sdk';

export type KeystoreErrorCode =
  /** A username or password is longer than 1024 characters. */
  | 'TooLong'
  | 'EmptyUsername'
  /** A username or password is not well-formed Unicode (a lone surrogate), or a new username holds a control character. */
  | 'InvalidInput'
  | 'UserExists'
  | 'UserNotFound'
  | 'IncorrectPassword'
  | 'WeakPassword'
  /** Too many incorrect passwords in a row: attempts are refused for a while. */
  | 'Throttled'
  /** Too many password checks (KDF runs) or strength checks already waiting: try again. */
  | 'Busy'
  /** The password strength check did not finish in time: the password is refused (fail closed). */
  | 'StrengthCheckTimeout'
  /** The password strength checker's worker did not start within its (generous) start-up bound. */
  | 'StrengthCheckUnavailable'
  /** importUser got a blob that does not decode, is out of bounds, costs more to derive than this node allows, or fails authentication. */
  | 'BadExport'
  /** The user's data is too large to export. */
  | 'TooLarge'
  /** A stored record or value does not decode or fails authentication. */
  | 'Corrupt'
  /** The method is turned off on this node (keystore.listUsers without --api-keystore-list-users-enabled). */
  | 'Disabled'
  /** KeystoreOptions out of range. */
  | 'InvalidOptions'
  /** The password strength checker failed (its worker thread crashed). */
  | 'Internal';

export class KeystoreError extends NodeError<KeystoreErrorCode> {}

const named: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};
/** Printable as Go's strconv.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space. */
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * `s` quoted as Go's `%q` (strconv.Quote) does: double quotes, `\"` and `\\`, the named escapes,
 * `\xNN` for other ASCII controls, `\uNNNN`/`\UNNNNNNNN` for other non-printable code points
 * (a lone surrogate included). Printable non-ASCII characters are kept as they are.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const esc = named[ch];
    if (esc !== undefined) {
      out += esc;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (printable.test(ch)) out += ch;
    else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}
