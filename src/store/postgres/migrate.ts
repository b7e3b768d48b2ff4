// Brings a PostgreSQL database to this build's schema, safely when several instances start at once.
import { join } from 'node:path';
import type pg from 'pg';
import { assertNotNewer, loadMigrations, type Migration } from '../migrations.ts';
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
 * Every step is a transaction that first takes the migration lock (a transaction advisory lock), so one instance migrates
 * while others wait, then find nothing to do; each migration commits with its schema_migrations row. The lock lives no
 * longer than a transaction, so this works as well through a transaction pooler (PgBouncer), which keeps no session lock,
 * as on a direct connection. Its own connection, outside the pool's statement timeout. `settle` runs last under the lock,
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
      const appliedHere = await underLock(client, async () => {
        // Another instance may have applied it while this one waited for the lock.
        if ((await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version])).rowCount !== 0) return false;
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [migration.version, migration.name]);
        return true;
      });
      if (appliedHere) newlyApplied.push(migration.version);
    }
    if (settle !== undefined) await underLock(client, () => settle(client));
    return { applied: newlyApplied, current: migrations.at(-1)?.version ?? 0 };
  } catch (error) {
    throw translatePgError(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One transaction holding the migration lock; committing or rolling back releases it. */
async function underLock<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // If the connection is gone the server has rolled back already.
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
