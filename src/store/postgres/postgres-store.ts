// The shared store for several instances: PostgreSQL through a node-postgres pool (postgres-engine.ts), composed of one part
// per concern, each beside its interface (accounts/postgres.ts, keys/postgres.ts, ...). Every write is one statement or one
// transaction; a change that spans concerns passes its transaction's Query to the other concern's functions.
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { PostgresAccounts } from '../accounts/postgres.ts';
import { PostgresAdminTokens } from '../admin-tokens/postgres.ts';
import { PostgresAudit } from '../audit/postgres.ts';
import { PostgresConsoleSessions } from '../console-sessions/postgres.ts';
import { PostgresCredentials } from '../credentials/postgres.ts';
import { PostgresIdempotency } from '../idempotency/postgres.ts';
import { PostgresKeys } from '../keys/postgres.ts';
import { PostgresKeyUsage } from '../key-usage/postgres.ts';
import { PostgresSchema } from '../schema/postgres.ts';
import { composeStore } from '../store-methods.ts';
import type { Store } from '../store.ts';
import { PostgresWebhooks } from '../webhooks/postgres.ts';
import { PostgresEngine, type PostgresConnectionOptions } from './postgres-engine.ts';

export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** Which environment this store serves: a database recorded as the other is refused (deployment.ts). */
  readonly environment: KeyEnvironment;
}

// The parts' methods are composed onto each instance (composeStore), so the class itself declares only what it adds.
export interface PostgresStore extends Store {}

export class PostgresStore {
  readonly engine = 'postgres';
  readonly environment: KeyEnvironment;
  readonly #engine: PostgresEngine;

  constructor(options: PostgresStoreOptions) {
    this.environment = options.environment;
    const engine = new PostgresEngine(options);
    this.#engine = engine;
    composeStore(this, [
      new PostgresSchema(engine, options.environment),
      new PostgresAccounts(engine),
      new PostgresKeys(engine),
      new PostgresCredentials(engine),
      new PostgresAdminTokens(engine),
      new PostgresAudit(engine),
      new PostgresIdempotency(engine),
      new PostgresWebhooks(engine),
      new PostgresKeyUsage(engine),
      new PostgresConsoleSessions(engine),
    ]);
  }

  ping(): Promise<void> {
    return this.#engine.ping();
  }

  close(): Promise<void> {
    return this.#engine.close();
  }
}
