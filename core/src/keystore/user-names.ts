/**
 * Usernames: what a new name may hold, its canonical form, and the in-memory list of the users.
 *
 * - A name is compared in Unicode NFC, so "é" typed precomposed (U+00E9) or decomposed (e +
 *   U+0301) is one user and look-alike duplicates cannot be created. New users are stored under
 *   their NFC form; a user stored before this rule under another form is still found by either.
 * - A new name may not hold control characters (C0, DEL, C1: NUL, newlines, escapes...) nor the
 *   bidirectional controls that reorder how the rest of a name is displayed (U+202A-U+202E,
 *   U+2066-U+2069, U+200E, U+200F, U+061C).
 * - The list is read from the store once (one iterator) and then kept in step by the keystore's
 *   writes, so listUsers opens no iterator (classic-level iterators cost native memory, db/level.ts).
 */
import { compareBytes, utf8Encode } from '@cornice/sdk';

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const CONTROLS = /\p{Cc}/u;

/** The canonical (NFC) form of a username. */
export function canonicalName(name: string): string {
  return name.normalize('NFC');
}

function codePoint(ch: string): string {
  return 'U+' + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/** Why `name` cannot be a new username (naming the character and where it is), or undefined. */
export function newNameProblem(name: string): string | undefined {
  for (const [re, what] of [
    [CONTROLS, 'a control character'],
    [BIDI_CONTROLS, 'a bidirectional control character'],
  ] as const) {
    const m = re.exec(name);
    if (m) return `username contains ${what} (${codePoint(m[0])} at index ${m.index})`;
  }
  return undefined;
}

/** The users' names as stored, with a lookup by canonical form. */
export class UserNames {
  /** Every stored name. */
  readonly #stored = new Set<string>();
  /** Canonical form -> stored name. */
  readonly #byCanonical = new Map<string, string>();
  /** listUsers' answer, rebuilt after a change. */
  #sorted: string[] | undefined;

  constructor(stored: Iterable<string> = []) {
    for (const name of stored) this.add(name);
  }

  /** The stored name of the user whose canonical name is `canonical`, or undefined. */
  resolve(canonical: string): string | undefined {
    return this.#byCanonical.get(canonical);
  }

  add(stored: string): void {
    this.#stored.add(stored);
    const canonical = canonicalName(stored);
    if (!this.#byCanonical.has(canonical)) this.#byCanonical.set(canonical, stored);
    this.#sorted = undefined;
  }

  remove(stored: string): void {
    if (!this.#stored.delete(stored)) return;
    const canonical = canonicalName(stored);
    if (this.#byCanonical.get(canonical) === stored) {
      this.#byCanonical.delete(canonical);
      // Only names stored before canonicalization can share a canonical form.
      for (const other of this.#stored) {
        if (canonicalName(other) === canonical) {
          this.#byCanonical.set(canonical, other);
          break;
        }
      }
    }
    this.#sorted = undefined;
  }

  /** Stored names in byte order of their UTF-8 (the store's order), a fresh array. */
  list(): string[] {
    if (!this.#sorted) {
      const keyed = [...this.#stored].map((name) => ({ name, key: utf8Encode(name) }));
      keyed.sort((a, b) => compareBytes(a.key, b.key));
      this.#sorted = keyed.map((k) => k.name);
    }
    return this.#sorted.slice();
  }
}
