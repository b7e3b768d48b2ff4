// Runs the store contract against SQLite, one fresh database file per test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { defineStoreContract, type StoreUnderTest } from './store-contract.ts';

async function makeSqliteStore(): Promise<StoreUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-contract-'));
  const path = join(dir, 'account-api.db');
  const opened: Store[] = [];
  const open = (): Store => {
    // With the credential cache on, as served by default: the contract proves it never answers stale.
    const store = new SqliteStore({ path, synchronous: 'normal', busyTimeoutMs: 5000, credentialCacheSize: 10_000 });
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
    cleanup: async () => {
      for (const store of opened) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

defineStoreContract('SQLite', makeSqliteStore);
