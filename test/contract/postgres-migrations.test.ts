// Protects PostgreSQL migrations when several instances start at once against an empty database: one applies, the others wait.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

import { DomainError } from '../../src/domain/errors.ts';
import type { Migration } from '../../src/store/migrations.ts';
import { applyMigrations, MIGRATION_LOCK_KEY } from '../../src/store/postgres/migrate.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { HANG_MS } from '../support/eventually.ts';
import { requiring } from '../support/requiring.ts';

const skip = await postgresSkipReason();
const { describe, test } = requiring(skip);

async function withDatabase(t: { after(fn: () => Promise<void>): void }): Promise<{ database: TestDatabase; open(): PostgresStore }> {
  const database = await createTestDatabase();
  const opened: PostgresStore[] = [];
  t.after(async () => {
    for (const store of opened) await store.close();
    await database.drop();
  });
  return {
    database,
    open: () => {
      const store = new PostgresStore({ url: database.url, environment: 'live', poolMax: 2, connectTimeoutMs: 2000, statementTimeoutMs: 5000 });
      opened.push(store);
      return store;
    },
  };
}

describe('PostgreSQL migrations', () => {
  test('five instances migrating an empty database at once: all succeed, each migration is applied exactly once', async (t) => {
    const { database, open } = await withDatabase(t);
    const stores = Array.from({ length: 5 }, open);
    const reports = await Promise.all(stores.map((store) => store.migrate()));

    const current = reports[0]!.current;
    assert.ok(current > 0, 'this build knows no migrations');
    assert.ok(reports.every((report) => report.current === current), 'the instances disagree on the current version');
    const applied = reports.flatMap((report) => report.applied).sort((a, b) => a - b);
    assert.deepEqual(applied, Array.from({ length: current }, (_, index) => index + 1), 'a migration was applied twice or not at all');
    const rows = (await database.query('SELECT version FROM schema_migrations ORDER BY version')).rows;
    assert.deepEqual(rows.map((row) => Number(row.version)), applied, 'schema_migrations does not hold exactly one row per migration');

    const again = await Promise.all(stores.map((store) => store.migrate()));
    assert.ok(again.every((report) => report.applied.length === 0), 'a second round applied migrations again');
    for (const store of stores) await store.checkSchema();
  });

  test('migrate waits while another session holds the migration lock, then applies', async (t) => {
    const { database, open } = await withDatabase(t);
    const holder = new pg.Client({ connectionString: database.url });
    holder.on('error', () => undefined);
    await holder.connect();
    t.after(() => holder.end().catch(() => undefined));
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);

    const store = open();
    let settled = false;
    const migrating = store.migrate().finally(() => {
      settled = true;
    });
    // Seen waiting on the lock (not merely unfinished after some time, which a loaded machine could also explain).
    const waiting = () =>
      database.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'account-api migrate' AND wait_event_type = 'Lock'", [database.name]);
    const deadline = Date.now() + HANG_MS;
    while ((await waiting()).rowCount === 0 && !settled) {
      assert.ok(Date.now() < deadline, `migrate neither waited on the lock nor finished in ${HANG_MS} ms: taken for a hang`);
      await sleep(20);
    }
    assert.equal(settled, false, 'migrate did not wait for the migration lock');
    const tables = await database.query("SELECT to_regclass('accounts') IS NOT NULL AS present");
    assert.equal(tables.rows[0]?.present, false, 'migrate changed the schema without holding the lock');

    await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    const report = await migrating;
    assert.ok(report.applied.length > 0, 'migrate applied nothing once the lock was free');
    const locks = await database.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    assert.equal(locks.rows[0]?.n, 0, 'migrate kept the migration lock after it finished');
  });

  const first: Migration = { version: 1, name: 'first', sql: 'CREATE TABLE first_table (id integer)' };

  async function versions(database: TestDatabase): Promise<number[]> {
    return (await database.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => Number(row.version));
  }

  async function tableExists(database: TestDatabase, table: string): Promise<boolean> {
    return (await database.query('SELECT to_regclass($1) IS NOT NULL AS present', [table])).rows[0]?.present === true;
  }

  test('a migration that fails is rolled back whole and not recorded', async (t) => {
    const { database } = await withDatabase(t);
    const broken: Migration = { version: 2, name: 'broken', sql: 'CREATE TABLE half_done (id integer); SELECT 1 / 0;' };
    await assert.rejects(applyMigrations({ url: database.url, connectTimeoutMs: 2000 }, [first, broken]), /division by zero/);
    assert.deepEqual(await versions(database), [1], 'the migrations before the broken one should stay applied, and only they');
    assert.equal(await tableExists(database, 'half_done'), false, 'the broken migration left a table behind');
  });

  test('a connection lost in the middle of a migration leaves the previous version and frees the lock', async (t) => {
    const { database } = await withDatabase(t);
    const slow: Migration = { version: 2, name: 'slow', sql: 'CREATE TABLE half_done (id integer); SELECT pg_sleep(600);' };
    const migrating = applyMigrations({ url: database.url, connectTimeoutMs: 2000 }, [first, slow]);
    migrating.catch(() => undefined); // observed below
    const sleeping = () =>
      database.query("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'account-api migrate' AND wait_event = 'PgSleep'", [
        database.name,
      ]);
    // The bound is a hang detector, not a timing check: a loaded machine may take long to get the migration going.
    const deadline = Date.now() + HANG_MS;
    while ((await sleeping()).rowCount === 0) {
      assert.ok(Date.now() < deadline, `test setup: the slow migration had not started after ${HANG_MS} ms`);
      await sleep(20);
    }
    await database.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [
      database.name,
      'account-api migrate',
    ]);
    await assert.rejects(migrating, (error) => error instanceof DomainError && error.code === 'store_unavailable');
    assert.deepEqual(await versions(database), [1]);
    assert.equal(await tableExists(database, 'half_done'), false, 'the interrupted migration left a table behind');
    const report = await applyMigrations({ url: database.url, connectTimeoutMs: 2000 }, [first]);
    assert.deepEqual(report.applied, [], 'the next migrate could not take the lock, or applied the first migration again');
  });
});
