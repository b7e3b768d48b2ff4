// Opens the store that the configuration names; the only place that knows which engines exist.
import type { Config } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

export function openStore(config: Pick<Config, 'database' | 'sqliteSynchronous' | 'sqliteBusyTimeoutMs' | 'postgres'>): Store {
  const { database } = config;
  if (database.engine === 'sqlite') {
    return new SqliteStore({ path: database.path, synchronous: config.sqliteSynchronous, busyTimeoutMs: config.sqliteBusyTimeoutMs });
  }
  throw new DomainError('internal', 'engine_unsupported', 'PostgreSQL is not supported by this build yet; use a sqlite: DATABASE_URL.');
}
