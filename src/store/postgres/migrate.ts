// Brings a PostgreSQL database to this build's schema, safely when several instances start at once.
import { join } from 'node:path';
import type pg from 'pg';
import { assertNotNewer, loadMigrations, migrationStatements, type Migration } from '../migrations.ts';
import { ConfigError } from '../../config.ts';
import { READ_ONLY_TRANSACTION, sqlState, translatePgError } from './pg-errors.ts';
import { pgDriver } from './pg-driver.ts';
import { endClient } from './pg-sockets.ts';

/** The same in every build; pg_locks lists it (advisory) while a migration runs. */
export const MIGRATION_LOCK_KEY = '7263017455301265218';

export function loadPostgresMigrations(): Migration[] {
  return loadMigrations(join(import.meta.dirname, 'migrations'));
}

export interface MigrationConnection {
  readonly url: string;
  readonly connectTimeoutMs: number;
  /** `transaction`: through PgBouncer, where no session lock can be held (see applyOutside). */
  readonly pooler?: 'none' | 'transaction';
}

export interface AppliedMigrations {
  readonly applied: readonly number[];
  readonly current: number;
}

/**
 * Every step is a transaction that first takes the migration lock (a transaction advisory lock), so one instance migrates
 * while others wait, then find nothing to do; each migration commits with its schema_migrations row. The lock lives no
 * longer than a transaction, so this works as well through a transaction pooler (PgBouncer), which keeps no session lock,
 * as on a direct connection; a migration marked OUTSIDE_A_TRANSACTION is the exception (applyOutside). Its own
 * connection, outside the pool's statement timeout. `settle` runs last under the lock, in its own transaction, for what one
 * instance must decide per database (its environment).
 */
export async function applyMigrations(
  connection: MigrationConnection,
  migrations: readonly Migration[],
  settle?: (client: pg.ClientBase) => Promise<void>,
): Promise<AppliedMigrations> {
  const client = new (pgDriver().Client)({
    connectionString: connection.url,
    connectionTimeoutMillis: connection.connectTimeoutMs,
    application_name: 'account-api migrate',
  });
  // A lost connection rejects the query in flight, handled there; unheard, this event would crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const applied = await underLock(client, async () => {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)',
      );
      return (await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => Number(row.version));
    });
    assertNotNewer(applied, migrations);
    const done = new Set(applied);
    const newlyApplied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      const appliedHere =
        migration.transactional === false && connection.pooler !== 'transaction'
          ? await applyOutside(client, migration)
          : await underLock(client, async () => {
              if (await isApplied(client, migration)) return false;
              if (migration.transactional === false) await applyPooled(client, migration);
              else await client.query(migration.sql);
              await record(client, migration);
              return true;
            });
      if (appliedHere) newlyApplied.push(migration.version);
    }
    if (settle !== undefined) await underLock(client, () => settle(client));
    return { applied: newlyApplied, current: migrations.at(-1)?.version ?? 0 };
  } catch (error) {
    // A request that meets a read-only server is a 503 to retry (a failover under way); a start that meets one cannot
    // migrate, and waiting is no cure when the address names a standby: said as the configuration mistake it usually is.
    if (sqlState(error) === READ_ONLY_TRANSACTION) {
      throw new ConfigError(
        'The database is read-only (a standby, or default_transaction_read_only is on), and account-api checks and applies ' +
          'its migrations at start: point DATABASE_URL at the primary.',
      );
    }
    throw translatePgError(error);
  } finally {
    // Ending the session releases any lock it still held (and a server that never sees it out does too, on its own timeout).
    await endClient(client);
  }
}

/** Another instance may have applied it while this one waited for the lock. */
async function isApplied(client: pg.ClientBase, migration: Migration): Promise<boolean> {
  return (await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version])).rowCount !== 0;
}

async function record(client: pg.ClientBase, migration: Migration): Promise<void> {
  await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [migration.version, migration.name]);
}

/**
 * A migration marked OUTSIDE_A_TRANSACTION on a direct connection: its statements each commit on their own (CREATE INDEX
 * CONCURRENTLY must), under the session's lock, taken in short waits as underLock's. No transaction stays open meanwhile,
 * since the index build waits for every transaction older than it to end.
 */
async function applyOutside(client: pg.ClientBase, migration: Migration): Promise<boolean> {
  await client.query(`SET lock_timeout = ${LOCK_WAIT_MS}`);
  for (;;) {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      break;
    } catch (error) {
      if (sqlState(error) !== LOCK_NOT_AVAILABLE) throw error;
    }
  }
  try {
    await client.query('RESET lock_timeout');
    if (await isApplied(client, migration)) return false;
    for (const statement of migrationStatements(migration.sql)) await client.query(statement);
    await record(client, migration);
    return true;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
}

/**
 * The same through a transaction pooler, where a session lock would stay behind on a pooled server connection: one
 * transaction under the lock, its index builds not concurrent (they lock the table's writes while they run). Instant on a
 * new database; on one with many rows the server's statement_timeout ends it, and the operator is told to migrate directly.
 */
async function applyPooled(client: pg.ClientBase, migration: Migration): Promise<void> {
  try {
    for (const statement of migrationStatements(migration.sql)) await client.query(statement.replace(/\bCONCURRENTLY\b/g, ''));
  } catch (error) {
    if (sqlState(error) !== QUERY_CANCELED) throw error;
    throw new ConfigError(
      `Migration ${migration.version} (${migration.name}) builds indexes over every row, which took longer than the database's ` +
        'statement_timeout through the pooler: run `account-api migrate` once on a direct connection (DATABASE_URL to ' +
        'PostgreSQL itself, PG_POOLER=none), then start the instances (docs/deploy.md#through-pgbouncer).',
    );
  }
}

const LOCK_NOT_AVAILABLE = '55P03';
const QUERY_CANCELED = '57014';

/** How long one wait for the migration lock lasts: below deadlock_timeout (1 s by default), see underLock. */
const LOCK_WAIT_MS = 200;

/**
 * One transaction holding the migration lock; committing or rolling back releases it. The lock is waited for in short
 * waits, each a transaction of its own: a session waiting on it holds a snapshot, and CREATE INDEX CONCURRENTLY (008) waits
 * for every older snapshot to end, so one long wait would deadlock the instance migrating with the one waiting.
 */
async function underLock<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`);
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (sqlState(error) === LOCK_NOT_AVAILABLE) continue; // wait again
      throw error;
    }
    try {
      await client.query('SET LOCAL lock_timeout = DEFAULT');
      const result = await work();
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // If the connection is gone the server has rolled back already.
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
