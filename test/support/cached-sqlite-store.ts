// A migrated SQLite store with the credential cache on, as served, holding one Premium account with one key: for the tests
// of the cache's freshness (test/unit/store/wal-index-header*.test.ts).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { issueKey } from '../../src/domain/api-keys.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

export interface CachedStore {
  /** The database file, for a second connection that plays the CLI. */
  readonly path: string;
  readonly store: SqliteStore;
  readonly keyId: string;
}

/** Makes `folder` and the store's database in it. */
export async function cachedStoreWithKey(folder: string, username: string): Promise<CachedStore> {
  mkdirSync(folder, { recursive: true });
  const path = join(folder, 'store.db');
  const store = new SqliteStore({ path, environment: 'live', synchronous: 'normal', busyTimeoutMs: 2000, credentialCacheSize: 100 });
  await store.migrate();
  const key = issueKey('live');
  await store.createAccount({ username, name: username, timezone: 'UTC', premium: true });
  await store.createKey(username, { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null });
  return { path, store, keyId: key.keyId };
}
