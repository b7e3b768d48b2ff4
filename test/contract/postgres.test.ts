// Runs the store contract against PostgreSQL, each test in a fresh schema of one database per file; skipped, saying why, without PostgreSQL.
import { after, describe } from 'node:test';

import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createTestDatabase, createTestSchema, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { defineStoreContract, type StoreUnderTest } from './store-contract.ts';

const skip = await postgresSkipReason();

let database: Promise<TestDatabase> | undefined;
after(async () => {
  if (database !== undefined) await (await database).drop();
});

async function makePostgresStore(): Promise<StoreUnderTest> {
  database ??= createTestDatabase();
  const schema = await createTestSchema(await database);
  const opened: Store[] = [];
  const open = (): Store => {
    const store = new PostgresStore({ url: schema.url, poolMax: 10, connectTimeoutMs: 2000, statementTimeoutMs: 5000 });
    opened.push(store);
    return store;
  };
  return {
    store: open(),
    openAnother: open,
    migrationRows: async () =>
      (await schema.query('SELECT version, name, applied_at FROM schema_migrations ORDER BY version')).rows.map((row) => ({
        version: Number(row.version),
        name: String(row.name),
        appliedAt: (row.applied_at as Date).toISOString(),
      })),
    recordMigration: async (version, name) => {
      await schema.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())', [version, name]);
    },
    cleanup: async () => {
      for (const store of opened) await store.close();
      await schema.drop();
    },
  };
}

describe('PostgreSQL store contract', () => {
  defineStoreContract('PostgreSQL', makePostgresStore, skip);
});
