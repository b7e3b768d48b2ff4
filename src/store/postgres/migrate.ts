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
 * A session advisory lock lets one instance migrate while others wait, then find nothing to do; each migration commits with
 * its schema_migrations row. Its own connection, outside the pool's statement timeout. `settle` runs last under the lock,
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
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
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
        await inTransaction(client, async () => {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [
            migration.version,
            migration.name,
          ]);
        });
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
