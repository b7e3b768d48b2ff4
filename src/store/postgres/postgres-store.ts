// The shared store for several instances: PostgreSQL through a node-postgres pool, every write one statement or one transaction.
import { join } from 'node:path';
import pg from 'pg';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { asEnvironment, assertEnvironment, environmentUnrecorded, type RecordedEnvironment } from '../deployment.ts';
import { loadMigrations, type Migration } from '../migrations.ts';
import type {
  Account,
  AccountUpdateOptions,
  ApiKeyRecord,
  Credential,
  HeldIdempotencyKey,
  IdempotencyClaimOutcome,
  IdempotencyKeyClaim,
  MigrateOptions,
  MigrationReport,
  NewAccount,
  NewApiKey,
  Store,
  StoredAnswer,
} from '../store.ts';
import { assertSchemaCurrent } from '../migrations.ts';
import { accountGone, accountNotFound, idempotencyKeyInUse, keyExists, keyNotFound, preconditionFailed, usernameTaken } from '../store-errors.ts';
import { claimKey, completeKey, lockHeldKey, pruneKeys, releaseKey } from './idempotency-keys.ts';
import { READ_ENVIRONMENT_SQL, recordEnvironment } from './deployment.ts';
import { applyMigrations } from './migrate.ts';
import { brokenConstraint, isConnectionFailure, translatePgError } from './pg-errors.ts';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  readonly url: string;
  /** Which environment this store serves: a database recorded as the other is refused (deployment.ts). */
  readonly environment: KeyEnvironment;
  readonly poolMax: number;
  /** How long a call waits for a connection (new or from the pool) before failing with store_unavailable. */
  readonly connectTimeoutMs: number;
  /** PostgreSQL cancels a statement after this long; the client gives up on a silent server a little later. */
  readonly statementTimeoutMs: number;
  /** Told about connections that die while idle in the pool; the pool has already dropped them. */
  readonly onConnectionError?: (error: Error) => void;
}

type Row = Record<string, unknown>;

/** The client-side timeout only has to catch a server that stopped answering, so the server's own timeout fires first. */
const CLIENT_TIMEOUT_MARGIN_MS = 1000;

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

function isoOrNull(value: unknown): string | null {
  return value === null ? null : iso(value);
}

function toAccount(row: Row): Account {
  return {
    id: Number(row.id),
    username: String(row.username),
    name: String(row.name),
    timezone: String(row.timezone),
    premium: row.premium === true,
    createdAt: iso(row.created_at),
  };
}

function toKey(row: Row): ApiKeyRecord {
  return {
    keyId: String(row.key_id),
    username: String(row.username),
    label: row.label === null ? null : String(row.label),
    displayPrefix: String(row.display_prefix),
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

const ACCOUNT_COLUMNS = 'id, username, name, timezone, premium, created_at';
const KEY_COLUMNS = 'k.key_id, a.username, k.label, k.display_prefix, k.created_at, k.last_used_at, k.revoked_at';
const BY_USERNAME = 'lower(username) = lower($1)';

/** Both unique constraints an account with its key can break, as the store's own failures. */
function createFailure(error: unknown, account: NewAccount, key?: NewApiKey): unknown {
  const broken = brokenConstraint(error);
  if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'accounts_username_unique') return usernameTaken(account.username);
  if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'api_keys_pkey' && key !== undefined) return keyExists(key.keyId);
  return error;
}

export class PostgresStore implements Store {
  readonly engine = 'postgres';
  readonly environment: KeyEnvironment;
  readonly #options: PostgresStoreOptions;
  readonly #pool: pg.Pool;
  readonly #migrations: readonly Migration[];
  #closing: Promise<void> | undefined;

  constructor(options: PostgresStoreOptions) {
    this.#options = options;
    this.environment = options.environment;
    this.#migrations = loadMigrations(join(import.meta.dirname, 'migrations'));
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolMax,
      connectionTimeoutMillis: options.connectTimeoutMs,
      statement_timeout: options.statementTimeoutMs,
      query_timeout: options.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
      application_name: 'account-api',
      keepAlive: true,
    });
    // An idle connection dies when the engine restarts; without a listener that 'error' would crash the process.
    // The pool has already dropped the connection, and the next call opens a fresh one.
    this.#pool.on('error', (error) => options.onConnectionError?.(error));
  }

  /**
   * One statement on a pooled connection. Unlike pool.query, a constraint violation keeps the connection;
   * only a connection-level failure discards it.
   */
  #query(text: string, values: readonly unknown[] = []): Promise<Row[]> {
    return this.#withClient((query) => query(text, values));
  }

  /** Several statements in one transaction on one connection: all of them, or (on any failure) none. */
  #transaction<T>(work: (query: (text: string, values?: readonly unknown[]) => Promise<Row[]>) => Promise<T>): Promise<T> {
    return this.#withClient(async (query) => {
      await query('BEGIN');
      try {
        const result = await work(query);
        await query('COMMIT');
        return result;
      } catch (error) {
        // On a lost connection the server has rolled back already, and the connection is discarded anyway.
        await query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async #withClient<T>(work: (query: (text: string, values?: readonly unknown[]) => Promise<Row[]>) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePgError(error);
    }
    let broken: Error | undefined;
    // A socket that fails mid-query also emits 'error' on the client, which nobody else listens to while it is checked out.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const query = async (text: string, values: readonly unknown[] = []): Promise<Row[]> => {
      try {
        const result = await client.query(text, values as unknown[]);
        return result.rows as Row[];
      } catch (error) {
        if (isConnectionFailure(error)) broken = error as Error;
        throw translatePgError(error);
      }
    };
    try {
      return await work(query);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  async #one(text: string, values: readonly unknown[] = []): Promise<Row | undefined> {
    return (await this.#query(text, values))[0];
  }

  /**
   * Applies what is missing under an advisory lock, so instances starting together against an empty database never race;
   * then, under the same lock and in one transaction, records the environment or checks it (rolled back if refused).
   */
  async migrate(options: MigrateOptions = {}): Promise<MigrationReport> {
    let recorded: RecordedEnvironment | undefined;
    const report = await applyMigrations(this.#options, this.#migrations, async (client) => {
      recorded = await recordEnvironment(client, this.environment, options.recordEnvironment === true);
      assertEnvironment(recorded.environment, this.environment);
    });
    return { ...report, environment: recorded!.environment, environmentRecorded: recorded!.recordedNow };
  }

  async checkSchema(): Promise<void> {
    // Read-only: a database nobody migrated has no schema_migrations yet, and that is "outdated", not an error.
    const table = await this.#one("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
    const applied =
      table?.present === true
        ? (await this.#query('SELECT version FROM schema_migrations ORDER BY version')).map((row) => Number(row.version))
        : [];
    assertSchemaCurrent(applied, this.#migrations);
    const recorded = asEnvironment((await this.#one(READ_ENVIRONMENT_SQL))?.environment);
    if (recorded === null) throw environmentUnrecorded();
    assertEnvironment(recorded, this.environment);
  }

  async createAccount(account: NewAccount): Promise<Account> {
    try {
      const row = await this.#one(
        `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
         VALUES ($1, $2, $3, $4, now(), now()) RETURNING ${ACCOUNT_COLUMNS}`,
        [account.username, account.name, account.timezone, account.premium],
      );
      return toAccount(row!);
    } catch (error) {
      throw createFailure(error, account);
    }
  }

  async createAccountWithKey(account: NewAccount, key: NewApiKey): Promise<Account> {
    try {
      // One statement: the key's foreign key is checked at its end, when the account exists; either both rows stay or neither.
      const row = await this.#one(
        `WITH a AS (
           INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
           VALUES ($1, $2, $3, $4, now(), now()) RETURNING ${ACCOUNT_COLUMNS}
         ), k AS (
           INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, created_at)
           SELECT $5, a.id, $6, $7, $8, now() FROM a
         )
         SELECT * FROM a`,
        [account.username, account.name, account.timezone, account.premium, key.keyId, Buffer.from(key.hash), key.displayPrefix, key.label],
      );
      return toAccount(row!);
    } catch (error) {
      throw createFailure(error, account, key);
    }
  }

  async findAccount(username: string): Promise<Account | null> {
    const row = await this.#one(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${BY_USERNAME}`, [username]);
    return row === undefined ? null : toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.#query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`)).map(toAccount);
  }

  async countAccounts(): Promise<number> {
    return Number((await this.#one('SELECT count(*) AS n FROM accounts'))!.n);
  }

  async setPremium(username: string, premium: boolean): Promise<Account> {
    const row = await this.#one(
      `UPDATE accounts SET premium = $2, updated_at = now() WHERE ${BY_USERNAME} RETURNING ${ACCOUNT_COLUMNS}`,
      [username, premium],
    );
    if (row === undefined) throw accountNotFound(username);
    return toAccount(row);
  }

  async updatePremium(accountId: number, premium: boolean): Promise<Account> {
    const row = await this.#one(`UPDATE accounts SET premium = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [
      accountId,
      premium,
    ]);
    if (row === undefined) throw accountGone();
    return toAccount(row);
  }

  async deleteAccount(username: string): Promise<void> {
    // Its keys go in the same statement, through ON DELETE CASCADE.
    const rows = await this.#query(`DELETE FROM accounts WHERE ${BY_USERNAME} RETURNING id`, [username]);
    if (rows.length === 0) throw accountNotFound(username);
  }

  /** One UPDATE that sets one column: the row lock serialises concurrent writers, and neither overwrites the other's column. */
  async #updateAccount(accountId: number, column: 'name' | 'timezone', value: string, options: AccountUpdateOptions = {}): Promise<Account> {
    const update = `UPDATE accounts SET ${column} = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`;
    if (options.expect === undefined && options.idempotency === undefined) {
      const row = await this.#one(update, [accountId, value]);
      if (row === undefined) throw accountGone();
      return toAccount(row);
    }
    // The row lock taken first holds off every other writer of the account until the condition, the update and the
    // recorded answer are committed together.
    return this.#transaction(async (query) => {
      const [current] = await query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
      if (current === undefined) throw accountGone();
      if (options.expect !== undefined && !options.expect(toAccount(current))) throw preconditionFailed();
      const idempotency = options.idempotency;
      if (idempotency !== undefined && !(await lockHeldKey(query, idempotency.held))) throw idempotencyKeyInUse();
      const [row] = await query(update, [accountId, value]);
      const updated = toAccount(row!);
      if (idempotency !== undefined) await completeKey(query, idempotency.held, idempotency.answer(updated));
      return updated;
    });
  }

  updateName(accountId: number, name: string, options?: AccountUpdateOptions): Promise<Account> {
    return this.#updateAccount(accountId, 'name', name, options);
  }

  updateTimezone(accountId: number, timezone: string, options?: AccountUpdateOptions): Promise<Account> {
    return this.#updateAccount(accountId, 'timezone', timezone, options);
  }

  async claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
    try {
      return await claimKey((text, values) => this.#query(text, values), claim);
    } catch (error) {
      // The account was deleted while its own request ran.
      if (brokenConstraint(error)?.state === FOREIGN_KEY_VIOLATION) throw accountGone();
      throw error;
    }
  }

  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean> {
    return completeKey((text, values) => this.#query(text, values), held, answer);
  }

  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void> {
    return releaseKey((text, values) => this.#query(text, values), held);
  }

  pruneIdempotencyKeys(): Promise<number> {
    return pruneKeys((text, values) => this.#query(text, values));
  }

  async createKey(username: string, key: NewApiKey): Promise<ApiKeyRecord> {
    let row: Row | undefined;
    try {
      // Finding the owner and inserting is one statement: no window in which a half-made key could remain.
      row = await this.#one(
        `WITH owner AS (SELECT id, username FROM accounts WHERE ${BY_USERNAME}),
              k AS (
                INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, created_at)
                SELECT $2, owner.id, $3, $4, $5, now() FROM owner
                RETURNING *
              )
         SELECT ${KEY_COLUMNS} FROM k JOIN owner a ON a.id = k.account_id`,
        [username, key.keyId, Buffer.from(key.hash), key.displayPrefix, key.label],
      );
    } catch (error) {
      const broken = brokenConstraint(error);
      if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'api_keys_pkey') {
        throw keyExists(key.keyId);
      }
      // The owner was deleted between the lookup and the insert, by a concurrent transaction.
      if (broken?.state === FOREIGN_KEY_VIOLATION) throw accountNotFound(username);
      throw error;
    }
    if (row === undefined) throw accountNotFound(username);
    return toKey(row);
  }

  async listKeys(username: string): Promise<ApiKeyRecord[]> {
    // A LEFT JOIN tells "no such account" from "an account without keys" in one read.
    const rows = await this.#query(
      `SELECT ${KEY_COLUMNS} FROM accounts a LEFT JOIN api_keys k ON k.account_id = a.id
       WHERE lower(a.username) = lower($1) ORDER BY k.created_at, k.key_id`,
      [username],
    );
    if (rows.length === 0) throw accountNotFound(username);
    return rows.filter((row) => row.key_id !== null).map(toKey);
  }

  async revokeKey(keyId: string): Promise<ApiKeyRecord> {
    // Revoking twice keeps the first time: the record says when the key stopped working.
    const row = await this.#one(
      `UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now())
       FROM accounts a WHERE a.id = k.account_id AND k.key_id = $1
       RETURNING ${KEY_COLUMNS}`,
      [keyId],
    );
    if (row === undefined) {
      throw keyNotFound(keyId);
    }
    return toKey(row);
  }

  async findCredential(keyId: string): Promise<Credential | null> {
    const row = await this.#one(
      `SELECT k.key_id, k.secret_hash, k.revoked_at, a.id, a.username, a.name, a.timezone, a.premium, a.created_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1`,
      [keyId],
    );
    if (row === undefined) return null;
    return {
      keyId: String(row.key_id),
      hash: row.secret_hash as Buffer, // a Buffer is a Uint8Array: no copy
      revoked: row.revoked_at !== null,
      account: toAccount(row),
    };
  }

  async touchKey(keyId: string, usedAt: Date): Promise<void> {
    await this.#query('UPDATE api_keys SET last_used_at = $2 WHERE key_id = $1', [keyId, usedAt]);
  }

  async ping(): Promise<void> {
    await this.#query('SELECT 1');
  }

  close(): Promise<void> {
    // pool.end() refuses a second call; every caller waits for the one shutdown instead.
    this.#closing ??= this.#pool.end();
    return this.#closing;
  }
}
