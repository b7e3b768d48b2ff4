// Tells SQLite failures apart by their result codes: a lock held by another connection (wait, or answer store_busy) from the rest.
import { DomainError } from '../../domain/errors.ts';

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
export const SQLITE_CONSTRAINT_UNIQUE = 2067;
export const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
export const SQLITE_CONSTRAINT_FOREIGNKEY = 787;

/** Another connection holds the lock this statement needed; the statement did nothing, so it may simply run again. */
export function isBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: number } | null)?.errcode;
  return errcode !== undefined && (errcode & 0xff) === SQLITE_BUSY;
}

/** Turns engine errors into domain errors, so no caller ever sees SQLite's vocabulary. */
export function translate(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const errcode = (error as { errcode?: number } | null)?.errcode;
  if (errcode === undefined) return error;
  const primary = errcode & 0xff;
  if (primary === SQLITE_BUSY || primary === SQLITE_LOCKED) {
    return new DomainError('unavailable', 'store_busy', 'The database is busy; try again shortly.', { cause: error });
  }
  return error;
}
