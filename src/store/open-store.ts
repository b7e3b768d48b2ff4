// Opens the store that the configuration names; the only place that knows which engines exist.
import type { Config } from '../config.ts';
import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

export function openStore(
  config: Pick<Config, 'environment' | 'database' | 'sqliteSynchronous' | 'sqliteBusyTimeoutMs' | 'credentialCacheSize' | 'postgres'>,
): Store {
  const { database, environment } = config;
  if (database.engine === 'sqlite') {
    return new SqliteStore({
      path: database.path,
      environment,
      synchronous: config.sqliteSynchronous,
      busyTimeoutMs: config.sqliteBusyTimeoutMs,
      credentialCacheSize: config.credentialCacheSize,
    });
  }
  return new PostgresStore({ url: database.url, environment, ...config.postgres });
}
