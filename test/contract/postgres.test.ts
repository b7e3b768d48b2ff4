// Runs the store contract against PostgreSQL, each test in a fresh schema of one database per file; skipped, saying why, without PostgreSQL.
import { after, describe } from 'node:test';

import { join } from 'node:path';
import type { KeyEnvironment } from '../../src/domain/api-keys.ts';
import { loadMigrations } from '../../src/store/migrations.ts';
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
  const open = (environment: KeyEnvironment = 'live'): Store => {
    const store = new PostgresStore({ url: schema.url, environment, poolMax: 10, connectTimeoutMs: 2000, statementTimeoutMs: 5000 });
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
    migrateLikeVersion1: async () => {
      const [first] = loadMigrations(join(import.meta.dirname, '../../src/store/postgres/migrations'));
      await schema.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)');
      await schema.query(first!.sql);
      await schema.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, $1, now())', [first!.name]);
    },
    addKeyLikeVersion1: async (username, key, revoked) => {
      await schema.query(
        `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, created_at, revoked_at)
         SELECT $1, id, $2, $3, $4, now(), CASE WHEN $5 THEN now() END FROM accounts WHERE username = $6`,
        [key.keyId, Buffer.from(key.hash), key.displayPrefix, key.label, revoked, username],
      );
    },
    recordedEnvironment: async () => {
      if ((await schema.query("SELECT to_regclass('deployment') IS NOT NULL AS present")).rows[0]?.present !== true) return null;
      const row = (await schema.query('SELECT environment, decided_by FROM deployment')).rows[0];
      return row === undefined ? null : { environment: String(row.environment), decidedBy: String(row.decided_by) };
    },
    // Every write of a row, even one that changes no value, makes a new row version with a new xmin.
    endpointRowVersion: async (endpointId) =>
      String((await schema.query('SELECT xmin::text AS version FROM webhook_endpoints WHERE endpoint_id = $1', [endpointId])).rows[0]?.version),
    revokeAdminTokenBehindTheStore: async (tokenId) => {
      await schema.query('UPDATE admin_tokens SET revoked_at = now() WHERE token_id = $1', [tokenId]);
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
