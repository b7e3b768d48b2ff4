// Opens the store that the configuration names; the only place that knows which engines exist.
import type { Config, DatabaseTarget } from '../config.ts';
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

/** Where the database is, for people and logs: 'PostgreSQL at db.internal:5432/account_api', never with the password. */
export function describeDatabase(database: DatabaseTarget): string {
  if (database.engine === 'sqlite') return `SQLite at ${database.path}`;
  const url = URL.parse(database.url);
  if (url === null) return 'PostgreSQL';
  // postgres:///db?host=/run/postgresql names a Unix socket directory instead of a host.
  const host = decodeURIComponent(url.hostname) || url.searchParams.get('host') || 'localhost';
  return `PostgreSQL at ${host}:${url.port || '5432'}${url.pathname}`;
}
