// Cursor paging of the admin API's lists and the console's pages: `limit` 1 to 100 (default 50), an opaque cursor, the next one in meta.next_cursor.
import { DomainError } from '../../domain/errors.ts';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 100;
/** No cursor this API gives out is longer (an endpoint's, the longest, holds an instant and an id). */
export const MAX_CURSOR_LENGTH = 100;

/** What a cursor walks: accounts (by id, upward) or audit entries (by id, back in time). A cursor of one is refused by the other. */
export type CursorKind = 'accounts' | 'audit';

const TAG: Readonly<Record<CursorKind, string>> = { accounts: 'a', audit: 'e' };

export function pageLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT;
  const limit = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
    throw new DomainError('invalid', 'invalid_limit', `limit is a whole number from 1 to ${MAX_PAGE_LIMIT}; got '${raw}'.`, { field: 'limit' });
  }
  return limit;
}

/** Opaque to callers (base64url), so what it holds may change without breaking them. */
export function encodeCursor(kind: CursorKind, id: number): string {
  return Buffer.from(`${TAG[kind]}${id}`, 'utf8').toString('base64url');
}

/** The id a cursor stands for; null without one. */
export function decodeCursor(kind: CursorKind, raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const decoded = /^[A-Za-z0-9_-]{1,40}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  const match = new RegExp(`^${TAG[kind]}(\\d{1,15})$`).exec(decoded);
  if (match === null) throw invalidCursor();
  return Number(match[1]);
}

function invalidCursor(): DomainError {
  return new DomainError('invalid', 'invalid_cursor', 'The cursor is not one this list gave out; start again without it, then follow meta.next_cursor.', {
    field: 'cursor',
  });
}

/** Webhook endpoints have no numeric id: their cursor holds the last one's creation instant and id, the order they are listed in. */
export function encodeEndpointCursor(position: { readonly createdAt: string; readonly endpointId: string }): string {
  return Buffer.from(`w${position.createdAt}|${position.endpointId}`, 'utf8').toString('base64url');
}

export function decodeEndpointCursor(raw: string | undefined): { createdAt: string; endpointId: string } | null {
  if (raw === undefined) return null;
  const decoded = raw.length <= MAX_CURSOR_LENGTH && /^[A-Za-z0-9_-]+$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  const match = /^w(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(we_[A-Za-z0-9_-]{1,40})$/.exec(decoded);
  // An instant that does not round-trip (2026-02-30) was not given out, and a database would refuse it.
  const at = match === null ? Number.NaN : Date.parse(match[1]!);
  if (match === null || Number.isNaN(at) || new Date(at).toISOString() !== match[1]) throw invalidCursor();
  return { createdAt: match[1]!, endpointId: match[2]! };
}

/** The next cursor when the store returned one more than the page holds; null on the last page. */
export function nextCursor<T>(kind: CursorKind, rows: readonly T[], limit: number, idOf: (row: T) => number): { page: T[]; next: string | null } {
  if (rows.length <= limit) return { page: [...rows], next: null };
  const page = rows.slice(0, limit);
  return { page, next: encodeCursor(kind, idOf(page.at(-1)!)) };
}
