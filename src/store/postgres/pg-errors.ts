// Tells node-postgres failures apart: a lost or refused connection (retry), a busy engine, a real fault.
import { ConfigError } from '../../config.ts';
import { DomainError } from '../../domain/errors.ts';

/** The engine is down, restarting, or the network between us is. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** read_only_sql_transaction: a write reached a server that takes none (a standby a failover left the address naming). */
export const READ_ONLY_TRANSACTION = '25006';

/** Outside class 08, still "this connection is gone or could not be had". */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping, or pg_terminate_backend
  '57P02', // crash_shutdown: another backend crashed and the server is resetting
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '53300', // too_many_connections
  READ_ONLY_TRANSACTION,
]);

/** PostgreSQL's "database is busy", as SQLITE_BUSY is SQLite's. */
const BUSY_SQLSTATES = new Set([
  '57014', // query_canceled: statement_timeout fired
  '55P03', // lock_not_available
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Reported without a code, stable across 8.x; 'Connection terminated' covers the 'unexpectedly' and timeout variants. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/, // pg-pool: no connection free within connectionTimeoutMillis
  /^timeout expired$/, // a lone pg.Client (the migration connection) that could not connect in time
  /^Query read timeout$/,
  /is not queryable$/,
  // 55000 (object_not_in_prerequisite_state) with this text: the database's ALLOW_CONNECTIONS is off, as during maintenance.
  // Only with this text: 55000 is also the code of real faults.
  /^database ".*" is not currently accepting connections$/,
];

/**
 * PgBouncer refusing a startup parameter it does not know (statement_timeout, sent unless PG_POOLER=transaction): the
 * connection goes through a pooler the configuration does not name. No retry cures that, so it is no connection failure.
 */
const POOLER_REFUSAL = /^unsupported startup parameter/;

/** Through `cause` and AggregateError's `errors` (each address Node tried). */
function someLink(error: unknown, test: (link: { code?: unknown; message?: unknown }) => boolean, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const link = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (test(link)) return true;
  if (someLink(link.cause, test, depth + 1)) return true;
  return Array.isArray(link.errors) && link.errors.some((inner) => someLink(inner, test, depth + 1));
}

/** The same request may succeed later. */
export function isConnectionFailure(error: unknown): boolean {
  if (isPoolerRefusal(error)) return false;
  return someLink(error, ({ code, message }) => {
    if (typeof code === 'string') {
      if (SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
      if (/^08[0-9A-Z]{3}$/.test(code)) return true; // class 08: connection exception
    }
    return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
  });
}

function isPoolerRefusal(error: unknown): boolean {
  return someLink(error, ({ message }) => typeof message === 'string' && POOLER_REFUSAL.test(message));
}

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * A text PostgreSQL cannot hold: a NUL byte (character_not_in_repertoire) in a value a caller typed, such as /accounts/%00.
 * The caller's to fix, as SQLite's answer (nothing matches) is; never a 500.
 */
const UNSTORABLE_TEXT = '22021';

/** The parts turn them into their own failures (username_taken, key_exists...). */
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';

export function brokenConstraint(error: unknown): { state: string; constraint: string } | undefined {
  const state = sqlState(error);
  const constraint = (error as { constraint?: unknown } | null)?.constraint;
  if (state === undefined || typeof constraint !== 'string') return undefined;
  return { state, constraint };
}

/** So no caller ever sees PostgreSQL's vocabulary for a retryable failure. */
export function translatePgError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  if (isPoolerRefusal(error)) {
    // A configuration mistake, said as one: the server refuses to start with this line rather than a stack.
    return new ConfigError(
      `The database URL goes through a transaction pooler such as PgBouncer, which refused: ${(error as Error).message}. ` +
        'Set PG_POOLER=transaction (docs/deploy.md#through-pgbouncer).',
    );
  }
  if (isConnectionFailure(error)) {
    return new DomainError('unavailable', 'store_unavailable', 'The database is unreachable; try again shortly.', { cause: error });
  }
  const state = sqlState(error);
  if (state === UNSTORABLE_TEXT) {
    return new DomainError('invalid', 'invalid_parameter', 'A value holds a character that cannot be stored or searched for (a NUL byte); remove it.', {
      cause: error,
    });
  }
  if (state !== undefined && BUSY_SQLSTATES.has(state)) {
    return new DomainError('unavailable', 'store_busy', 'The database is busy; try again shortly.', { cause: error });
  }
  return error;
}
