// Brings a PostgreSQL database to this build's schema, safely when several instances start at once.
import { join } from 'node:path';
import type pg from 'pg';
import { assertNotNewer, loadMigrations, migrationStatements, type Migration } from '../migrations.ts';
import { translatePgError } from './pg-errors.ts';
import { pgDriver } from './pg-driver.ts';

/** The same in every build; pg_locks lists it (advisory) while a migration runs. */
export const MIGRATION_LOCK_KEY = '7263017455301265218';

export function loadPostgresMigrations(): Migration[] {
  return loadMigrations(join(import.meta.dirname, 'migrations'));
}

export interface MigrationConnection {
  readonly url: string;
  readonly connectTimeoutMs: number;
}

export interface AppliedMigrations {
  readonly applied: readonly number[];
  readonly current: number;
}

/**
 * A session advisory lock lets one instance migrate while others wait, then find nothing to do; each migration commits with
 * its schema_migrations row (one marked OUTSIDE_A_TRANSACTION runs statement by statement, recorded once all have run). Its own connection, outside the pool's statement timeout. `settle` runs last under the lock,
 * in its own transaction, for what one instance must decide per database (its environment).
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
    await takeMigrationLock(client);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)',
      );
      const applied = (await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => Number(row.version));
      assertNotNewer(applied, migrations);
      const done = new Set(applied);
      const newlyApplied: number[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        const record = () =>
          client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [migration.version, migration.name]);
        if (migration.transactional === false) {
          for (const statement of migrationStatements(migration.sql)) await client.query(statement);
          await record();
        } else {
          await inTransaction(client, async () => {
            await client.query(migration.sql);
            await record();
          });
        }
        newlyApplied.push(migration.version);
      }
      if (settle !== undefined) await inTransaction(client, () => settle(client));
      return { applied: newlyApplied, current: migrations.at(-1)?.version ?? 0 };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } catch (error) {
    throw translatePgError(error);
  } finally {
    // Ending the session releases the lock too.
    await client.end().catch(() => undefined);
  }
}

/** How long one wait for the migration lock lasts: below deadlock_timeout (1 s by default), see takeMigrationLock. */
const LOCK_WAIT_MS = 200;

/**
 * Waits for the migration lock in short waits, each a statement of its own. A session waiting on it holds a snapshot, and
 * CREATE INDEX CONCURRENTLY (008) waits for every older snapshot to end: one long wait would be a deadlock between the
 * instance migrating and the one waiting; short ones end, and the next wait's snapshot is newer than the index build's.
 */
async function takeMigrationLock(client: pg.ClientBase): Promise<void> {
  await client.query(`SET lock_timeout = ${LOCK_WAIT_MS}`);
  for (;;) {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error;
    }
  }
  await client.query('RESET lock_timeout');
}

async function inTransaction(client: pg.ClientBase, work: () => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await work();
    await client.query('COMMIT');
  } catch (error) {
    // If the connection is gone the server has rolled back already.
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
