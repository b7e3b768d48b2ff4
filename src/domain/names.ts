// Rules for usernames (the Basic-auth user part) and display names (POST /user `name`).
import { DomainError } from './errors.ts';

export const USERNAME_MAX_LENGTH = 64;
export const DISPLAY_NAME_MAX_LENGTH = 100;

const USERNAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
// Cc (C0, DEL, C1) plus the line and paragraph separators, which break logs and terminals just the same.
const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;

/** Usernames travel in Basic credentials, so a colon could never be sent; we allow only a safe ASCII set. */
export function checkUsername(username: string, field = 'username'): string {
  if (!USERNAME_PATTERN.test(username)) {
    throw new DomainError(
      'invalid',
      'invalid_username',
      `A username is 1 to ${USERNAME_MAX_LENGTH} characters of letters, digits, '.', '_' and '-'.`,
      { field },
    );
  }
  return username;
}

/** Counts Unicode code points, not UTF-16 units, so an emoji is one character as a person sees it. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * A display name is kept exactly as submitted (no trimming), so the caller gets back what it sent;
 * it must still be something a person can read.
 */
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
  if (name.trim() === '') {
    throw new DomainError('invalid', 'invalid_name', 'The name must contain something other than whitespace.', { field });
  }
  return name;
}
