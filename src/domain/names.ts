// Rules for usernames (the Basic-auth user part) and display names (POST /user `name`).
import { DomainError } from './errors.ts';

export const USERNAME_MAX_LENGTH = 64;
export const DISPLAY_NAME_MAX_LENGTH = 100;

/** The username alphabet and length, as the OpenAPI documents state it too. */
export const USERNAME_PATTERN_SOURCE = `^[A-Za-z0-9._-]{1,${USERNAME_MAX_LENGTH}}$`;
const USERNAME_PATTERN = new RegExp(USERNAME_PATTERN_SOURCE);
// `.` and `..` are removed from /admin/v0/accounts/{username} by URL-normalising clients, and `-` reads as a flag: a name needs a letter or digit.
const HAS_LETTER_OR_DIGIT = /[A-Za-z0-9]/;
// Cc (C0, DEL, C1) plus the line and paragraph separators, which break logs and terminals just the same.
const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;
// Bidi embeddings, overrides and isolates reorder what follows them, so a name could make a log line read as something else.
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;
// Something a person can see: no white space, control, format or default-ignorable character, lone mark, unassigned code
// point, nor a blank that is a letter or symbol only by category (U+2800, U+1D159).
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{M}\p{Cs}\p{Cn}\u2800\u{1D159}]/u;

/** Basic credentials cannot carry a colon; we allow only a safe ASCII set. */
export function checkUsername(username: string, field = 'username'): string {
  if (!USERNAME_PATTERN.test(username) || !HAS_LETTER_OR_DIGIT.test(username)) {
    throw new DomainError(
      'invalid',
      'invalid_username',
      `A username is 1 to ${USERNAME_MAX_LENGTH} characters of letters, digits, '.', '_' and '-', with at least one letter or digit.`,
      { field },
    );
  }
  return username;
}

/** Code points, not UTF-16 units: an emoji is one character as a person sees it. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

const USERNAME_PREFIX_PATTERN = USERNAME_PATTERN;

/**
 * The start of a username, to search accounts by (ignoring case): 1 to 64 characters of the username alphabet. Unlike a
 * username it may be only `.`, `_` or `-`; the stores match `_` as itself, never as a LIKE wildcard.
 */
export function checkUsernamePrefix(prefix: string, field = 'username_prefix'): string {
  if (!USERNAME_PREFIX_PATTERN.test(prefix)) {
    throw new DomainError(
      'invalid',
      'invalid_username_prefix',
      `A username prefix is 1 to ${USERNAME_MAX_LENGTH} characters of letters, digits, '.', '_' and '-'.`,
      { field },
    );
  }
  return prefix;
}

/** Kept exactly as submitted (no trimming), so the caller gets back what it sent; it must still be readable. */
export function checkDisplayName(name: string, field = 'name'): string {
  const length = codePointLength(name);
  if (length === 0) {
    throw new DomainError('invalid', 'invalid_name', 'The name must not be empty.', { field });
  }
  if (length > DISPLAY_NAME_MAX_LENGTH) {
    throw new DomainError(
      'invalid',
      'invalid_name',
      `The name must be at most ${DISPLAY_NAME_MAX_LENGTH} characters long; it has ${length}.`,
      { field },
    );
  }
  if (CONTROL_CHARACTER.test(name)) {
    throw new DomainError('invalid', 'invalid_name', 'The name must not contain control characters such as line breaks or tabs.', {
      field,
    });
  }
  if (BIDI_CONTROL.test(name)) {
    throw new DomainError(
      'invalid',
      'invalid_name',
      'The name must not contain bidirectional embedding, override or isolate characters (U+202A-U+202E, U+2066-U+2069).',
      { field },
    );
  }
  if (!VISIBLE.test(name)) {
    throw new DomainError('invalid', 'invalid_name', 'The name must contain something visible, not only spaces or invisible characters.', {
      field,
    });
  }
  return name;
}
