// The embedded default store: SQLite through node:sqlite, in WAL mode so the CLI can write while the server runs. One engine
// (sqlite-engine.ts) shared by one part per concern, each beside its interface (accounts/sqlite.ts, keys/sqlite.ts, ...).
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { SqliteAccounts } from '../accounts/sqlite.ts';
import { SqliteAdminTokens } from '../admin-tokens/sqlite.ts';
import { SqliteAudit } from '../audit/sqlite.ts';
import { SqliteConsoleSessions } from '../console-sessions/sqlite.ts';
import { CredentialCache } from '../credentials/credential-cache.ts';
import { SqliteCredentials } from '../credentials/sqlite.ts';
import { SqliteIdempotency } from '../idempotency/sqlite.ts';
import { SqliteKeys } from '../keys/sqlite.ts';
import { SqliteKeyUsage } from '../key-usage/sqlite.ts';
import { SqliteSchema } from '../schema/sqlite.ts';
import { composeStore } from '../store-methods.ts';
import type { Store } from '../store.ts';
import { SqliteWebhooks } from '../webhooks/sqlite.ts';
import { SqliteEngine, type SqliteEngineOptions } from './sqlite-engine.ts';

export interface SqliteStoreOptions extends SqliteEngineOptions {
  /** Which environment this store serves: a database recorded as the other is refused (deployment.ts). */
  readonly environment: KeyEnvironment;
  /** Credentials kept in memory between requests (0: none); see credential-cache.ts for why this is never stale. */
  readonly credentialCacheSize?: number;
}

// Its Store methods are the parts' own, bound, defined by composeStore (store-methods.ts).
export interface SqliteStore extends Store {}

export class SqliteStore {
  readonly engine = 'sqlite';
  readonly environment: KeyEnvironment;
  readonly #db: SqliteEngine;

  constructor(options: SqliteStoreOptions) {
    this.environment = options.environment;
    const engine = new SqliteEngine(options);
    // Ours to keep current: the accounts and keys parts update it on their commits, the credentials part reads it.
    const credentials = new CredentialCache(options.credentialCacheSize ?? 0);
    composeStore(this, [
      new SqliteSchema(engine, options.environment),
      new SqliteAccounts(engine, credentials),
      new SqliteKeys(engine, credentials),
      new SqliteCredentials(engine, credentials),
      new SqliteAdminTokens(engine),
      new SqliteAudit(engine),
      new SqliteIdempotency(engine),
      new SqliteWebhooks(engine),
      new SqliteKeyUsage(engine),
      new SqliteConsoleSessions(engine),
    ]);
    engine.opened();
    this.#db = engine;
  }

  /** A consistent copy of the whole database at `path` (sqlite-engine.ts); the CLI's backup. Not part of Store: PostgreSQL has pg_dump. */
  backup(path: string): Promise<number> {
    return this.#db.backup(path);
  }

  ping(): Promise<void> {
    return this.#db.ping();
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
