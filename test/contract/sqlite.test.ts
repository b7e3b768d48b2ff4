// Runs the store contract against SQLite, one fresh database file per test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

import type { KeyEnvironment } from '../../src/domain/api-keys.ts';
import { loadMigrations } from '../../src/store/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { defineStoreContract, type StoreUnderTest } from './store-contract.ts';

async function makeSqliteStore(): Promise<StoreUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-contract-'));
  const path = join(dir, 'account-api.db');
  const opened: Store[] = [];
  const open = (environment: KeyEnvironment = 'live'): Store => {
    // With the credential cache on, as served by default: the contract proves it never answers stale.
    const store = new SqliteStore({ path, environment, synchronous: 'normal', busyTimeoutMs: 5000, credentialCacheSize: 10_000 });
    opened.push(store);
    return store;
  };
  const withDatabase = <T>(work: (db: DatabaseSync) => T): T => {
    const db = new DatabaseSync(path);
    try {
      return work(db);
    } finally {
      db.close();
    }
  };
  return {
    store: open(),
    openAnother: open,
    migrationRows: async () =>
      withDatabase((db) =>
        db
          .prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version')
          .all()
          .map((row) => ({ version: Number(row.version), name: String(row.name), appliedAt: String(row.applied_at) })),
      ),
    recordMigration: async (version, name) => {
      withDatabase((db) =>
        db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(version, name, new Date().toISOString()),
      );
    },
    migrateLikeVersion1: async () => {
      const [first] = loadMigrations(join(import.meta.dirname, '../../src/store/sqlite/migrations'));
      withDatabase((db) => {
        db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
        db.exec(first!.sql);
        db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, ?, ?)').run(first!.name, new Date().toISOString());
      });
    },
    addKeyLikeVersion1: async (username, key, revoked) => {
      withDatabase((db) =>
        db
          .prepare(
            `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, created_at, revoked_at)
             SELECT ?, id, ?, ?, ?, ?, ? FROM accounts WHERE username = ?`,
          )
          .run(key.keyId, key.hash, key.displayPrefix, key.label, new Date().toISOString(), revoked ? new Date().toISOString() : null, username),
      );
    },
    recordedEnvironment: async () =>
      withDatabase((db) => {
        if (db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'deployment'").get() === undefined) return null;
        const row = db.prepare('SELECT environment, decided_by FROM deployment').get();
        return row === undefined ? null : { environment: String(row.environment), decidedBy: String(row.decided_by) };
      }),
    // SQLite keeps no row version: a trigger, made at the first call, counts the writes of each endpoint's row.
    endpointRowVersion: async (endpointId) =>
      withDatabase((db) => {
        db.exec(`CREATE TABLE IF NOT EXISTS test_endpoint_writes (endpoint_id TEXT NOT NULL);
          CREATE TRIGGER IF NOT EXISTS test_count_endpoint_writes AFTER UPDATE ON webhook_endpoints
          BEGIN INSERT INTO test_endpoint_writes VALUES (NEW.endpoint_id); END;`);
        return String(db.prepare('SELECT count(*) AS n FROM test_endpoint_writes WHERE endpoint_id = ?').get(endpointId)!.n);
      }),
    revokeAdminTokenBehindTheStore: async (tokenId) => {
      withDatabase((db) => db.prepare('UPDATE admin_tokens SET revoked_at = ? WHERE token_id = ?').run(new Date().toISOString(), tokenId));
    },
    cleanup: async () => {
      for (const store of opened) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

defineStoreContract('SQLite', makeSqliteStore);
