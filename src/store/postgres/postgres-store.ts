// The shared store for several instances: PostgreSQL through a node-postgres pool, every write one statement or one transaction.
import { join } from 'node:path';
import type pg from 'pg';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { asEnvironment, assertEnvironment, environmentUnrecorded, type RecordedEnvironment } from '../deployment.ts';
import { loadMigrations, type Migration } from '../migrations.ts';
import {
  MAX_ACTIVE_KEYS,
  type Account,
  type AccountUpdateOptions,
  type AdminCredential,
  type AdminTokenRecord,
  type ApiKeyRecord,
  type AuditActor,
  type AuditEvent,
  type AuditQuery,
  type Credential,
  type HeldIdempotencyKey,
  type IdempotencyClaimOutcome,
  type IdempotencyKeyClaim,
  type KeyScope,
  type MigrateOptions,
  type MigrationReport,
  type NewAccount,
  type NewAdminToken,
  type NewApiKey,
  type NewAuditEvent,
  type RolledKey,
  type Store,
  type StoredAnswer,
} from '../store.ts';
import { adminTokenCreated, adminTokenRevoked } from '../admin-token-changes.ts';
import { accountCreated, accountDeleted, keyCreated, keyRolled, successorExpiry } from '../audit-changes.ts';
import { deleteAuditEventsBefore, insertAuditEvent, selectAuditEvents } from '../audit/postgres.ts';
import type { Query } from './query.ts';
import { iso, isoOrNull } from './query.ts';
import * as adminTokenRows from '../admin-tokens/postgres.ts';
import { assertSchemaCurrent } from '../migrations.ts';
import {
  accountGone,
  accountNotFound,
  adminTokenExists,
  adminTokenNotFound,
  idempotencyKeyInUse,
  keyAlreadyRolled,
  keyExists,
  keyInactive,
  keyNotFound,
  preconditionFailed,
  tooManyKeys,
  usernameTaken,
} from '../store-errors.ts';
import { claimKey, completeKey, lockHeldKey, pruneKeys, releaseKey } from '../idempotency/postgres.ts';
import { READ_ENVIRONMENT_SQL, recordEnvironment } from './deployment.ts';
import { applyMigrations } from './migrate.ts';
import * as webhookRows from '../webhooks/postgres.ts';
import { newEventId } from '../../domain/webhooks/events.ts';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryAttempt,
  NewWebhookEndpoint,
  OutboxStats,
  WebhookEndpoint,
  WebhookEndpointPosition,
} from '../webhooks/webhook-store.ts';
import { brokenConstraint, isConnectionFailure, translatePgError } from './pg-errors.ts';
import { pgDriver } from './pg-driver.ts';

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
    scope: String(row.scope) as KeyScope,
    createdAt: iso(row.created_at),
    expiresAt: isoOrNull(row.expires_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
    rolledInto: row.rolled_into === null ? null : String(row.rolled_into),
  };
}


const ACCOUNT_COLUMNS = 'id, username, name, timezone, premium, created_at';
const KEY_COLUMNS =
  'k.key_id, a.username, k.label, k.display_prefix, k.scope, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.rolled_into';
const ACTIVE_KEYS =
  'SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())';
const BY_USERNAME = 'lower(username) = lower($1)';
const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * The rest of #updateAccount's one statement: account.updated's webhook event ($6 its id), built as events.ts's eventBody
 * builds it, and its deliveries (webhooks/postgres.ts's FAN_OUT), both only when the audit entry was written.
 */
const WEBHOOK_EVENT_OF_UPDATE = (column: 'name' | 'timezone') => `event AS (
              INSERT INTO webhook_events (event_id, type, created_at, payload)
              SELECT $6, 'account.updated', entry.occurred_at, json_build_object(
                'id', $6::text, 'type', 'account.updated', 'created_at', to_char(entry.occurred_at AT TIME ZONE 'UTC', ${UTC_ISO}),
                'data', json_build_object(
                  'object', json_build_object('user_id', changed.id, 'username', changed.username, 'name', changed.name,
                    'timezone', changed.timezone, 'premium', changed.premium,
                    'created_at', to_char(changed.created_at AT TIME ZONE 'UTC', ${UTC_ISO})),
                  'changes', json_build_object('${column}', json_build_object('old', changed.old_value, 'new', $2::text))))::text
              FROM entry, changed
              RETURNING event_id, type, created_at
            ),
            fan_out AS (
              INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
              SELECT event.event_id, e.endpoint_id, event.created_at, event.created_at FROM event, webhook_endpoints e
              WHERE e.disabled_at IS NULL AND (e.event_types IS NULL OR event.type = ANY (e.event_types))
            )`;

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
    this.#pool = new (pgDriver().Pool)({
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
  async #query(text: string, values: readonly unknown[] = []): Promise<Row[]> {
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
    try {
      const result = await client.query(text, values as unknown[]);
      return result.rows as Row[];
    } catch (error) {
      if (isConnectionFailure(error)) broken = error as Error;
      throw translatePgError(error);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  async #one(text: string, values: readonly unknown[] = []): Promise<Row | undefined> {
    return (await this.#query(text, values))[0];
  }

  /** Several statements on one connection, committed together or not at all; constraint failures keep the connection. */
  async #transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePgError(error);
    }
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const query: Query = async (text, values = []) => {
      try {
        return (await client.query(text, values as unknown[])).rows as Row[];
      } catch (error) {
        if (isConnectionFailure(error)) broken = error as Error;
        throw error;
      }
    };
    try {
      await query('BEGIN');
      const result = await work(query);
      await query('COMMIT');
      return result;
    } catch (error) {
      // A connection that is gone has rolled back on the server already.
      if (broken === undefined) await client.query('ROLLBACK').catch(() => undefined);
      throw translatePgError(error);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /** The entry beside the change, on the change's connection, when the caller says who made it. */
  async #audit(query: Query, audit: AuditActor | undefined, event: NewAuditEvent): Promise<void> {
    if (audit !== undefined) await insertAuditEvent(query, audit, event);
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

  async createAccount(account: NewAccount, audit?: AuditActor): Promise<Account> {
    try {
      return await this.#transaction(async (query) => {
        const [row] = await query(
          `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
           VALUES ($1, $2, $3, $4, now(), now()) RETURNING ${ACCOUNT_COLUMNS}`,
          [account.username, account.name, account.timezone, account.premium],
        );
        const created = toAccount(row!);
        await this.#audit(query, audit, accountCreated(created));
        return created;
      });
    } catch (error) {
      throw createFailure(error, account);
    }
  }

  async createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account> {
    if (audit !== undefined) {
      try {
        return await this.#transaction(async (query) => {
          const [row] = await query(
            `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
             VALUES ($1, $2, $3, $4, now(), now()) RETURNING ${ACCOUNT_COLUMNS}`,
            [account.username, account.name, account.timezone, account.premium],
          );
          const created = toAccount(row!);
          await this.#audit(query, audit, accountCreated(created));
          const record = await this.#insertKey(query, created.id, key);
          await this.#audit(query, audit, keyCreated(created.id, record));
          return created;
        });
      } catch (error) {
        throw createFailure(error, account, key);
      }
    }
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

  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#setPremium(BY_USERNAME, username, premium, audit, () => accountNotFound(username));
  }

  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#setPremium('id = $1', accountId, premium, audit, accountGone);
  }

  /** The row is locked while its old value is read, so the entry's old value is the one this update replaced. */
  #setPremium(where: string, which: unknown, premium: boolean, audit: AuditActor | undefined, missing: () => Error): Promise<Account> {
    return this.#transaction(async (query) => {
      const [before] = await query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${where} FOR UPDATE`, [which]);
      if (before === undefined) throw missing();
      const [row] = await query(`UPDATE accounts SET premium = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [
        before.id,
        premium,
      ]);
      const updated = toAccount(row!);
      if (before.premium !== premium) {
        await this.#audit(query, audit, {
          action: 'account.premium_changed',
          accountId: updated.id,
          username: updated.username,
          changes: { premium: { old: before.premium === true, new: premium } },
        });
      }
      return updated;
    });
  }

  deleteAccount(username: string, audit?: AuditActor): Promise<void> {
    return this.#transaction(async (query) => {
      // Its keys go in the same statement, through ON DELETE CASCADE.
      const [row] = await query(`DELETE FROM accounts WHERE ${BY_USERNAME} RETURNING ${ACCOUNT_COLUMNS}`, [username]);
      if (row === undefined) throw accountNotFound(username);
      await this.#audit(query, audit, accountDeleted(toAccount(row)));
    });
  }

  /**
   * One UPDATE that sets one column: the row lock serialises concurrent writers, and neither overwrites the other's column.
   * With an actor alone, still one statement (one round trip on the public POSTs): the row's old value is read under that
   * lock and the audit entry inserted by the same statement, only when the value changed. With a condition (If-Match) or an
   * idempotency key, a transaction (see #updateChecked).
   */
  async #updateAccount(
    accountId: number,
    column: 'name' | 'timezone',
    value: string,
    audit: AuditActor | undefined,
    options: AccountUpdateOptions = {},
  ): Promise<Account> {
    if (options.expect !== undefined || options.idempotency !== undefined) return this.#updateChecked(accountId, column, value, audit, options);
    if (audit === undefined) {
      const row = await this.#one(
        `UPDATE accounts SET ${column} = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
        [accountId, value],
      );
      if (row === undefined) throw accountGone();
      return toAccount(row);
    }
    const row = await this.#one(
      `WITH old AS (SELECT id, ${column} AS value FROM accounts WHERE id = $1 FOR UPDATE),
            changed AS (
              UPDATE accounts a SET ${column} = $2::text, updated_at = now() FROM old WHERE a.id = old.id
              RETURNING a.id, a.username, a.name, a.timezone, a.premium, a.created_at, old.value AS old_value
            ),
            entry AS (
              INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes, request_id, address)
              SELECT clock_timestamp(), $3, 'account.updated', id, username,
                     jsonb_build_object('${column}', jsonb_build_object('old', old_value, 'new', $2::text)), $4, $5
              FROM changed WHERE old_value IS DISTINCT FROM $2::text
              RETURNING occurred_at
            ),
            ${WEBHOOK_EVENT_OF_UPDATE(column)}
       SELECT ${ACCOUNT_COLUMNS} FROM changed`,
      [accountId, value, audit.actor, audit.requestId, audit.address, newEventId()],
    );
    if (row === undefined) throw accountGone();
    return toAccount(row);
  }

  /**
   * The row lock taken first holds off every other writer of the account until the condition, the update, its audit entry
   * and the recorded answer are committed together; a failed condition rolls back before anything is written.
   */
  #updateChecked(accountId: number, column: 'name' | 'timezone', value: string, audit: AuditActor | undefined, options: AccountUpdateOptions): Promise<Account> {
    return this.#transaction(async (query) => {
      const [current] = await query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
      if (current === undefined) throw accountGone();
      const before = toAccount(current);
      if (options.expect !== undefined && !options.expect(before)) throw preconditionFailed();
      const idempotency = options.idempotency;
      if (idempotency !== undefined && !(await lockHeldKey(query, idempotency.held))) throw idempotencyKeyInUse();
      const [row] = await query(`UPDATE accounts SET ${column} = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [
        accountId,
        value,
      ]);
      const updated = toAccount(row!);
      if (before[column] !== value) {
        await this.#audit(query, audit, {
          action: 'account.updated',
          accountId: updated.id,
          username: updated.username,
          changes: { [column]: { old: before[column], new: value } },
        });
      }
      if (idempotency !== undefined) await completeKey(query, idempotency.held, idempotency.answer(updated));
      return updated;
    });
  }

  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#updateAccount(accountId, 'name', name, audit, options);
  }

  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#updateAccount(accountId, 'timezone', timezone, audit, options);
  }

  async claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
    try {
      return await claimKey((text, values) => this.#query(text, values), claim);
    } catch (error) {
      // The account was deleted while its own request ran (an admin token is never deleted, only revoked).
      if (brokenConstraint(error)?.state === FOREIGN_KEY_VIOLATION && claim.accountId !== undefined) throw accountGone();
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

  async #insertKey(query: Query, accountId: number, key: NewApiKey): Promise<ApiKeyRecord> {
    try {
      const [row] = await query(
        `WITH k AS (
           INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, scope, expires_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING *
         )
         SELECT ${KEY_COLUMNS} FROM k JOIN accounts a ON a.id = k.account_id`,
        [key.keyId, accountId, Buffer.from(key.hash), key.displayPrefix, key.label, key.scope ?? 'write', key.expiresAt ?? null],
      );
      return toKey(row!);
    } catch (error) {
      const broken = brokenConstraint(error);
      if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'api_keys_pkey') throw keyExists(key.keyId);
      throw error;
    }
  }

  /** Under the owner's row lock: of two keys added at once past MAX_ACTIVE_KEYS, one is refused. */
  async #assertRoomForKey(query: Query, accountId: unknown, username: string): Promise<void> {
    const [row] = await query(ACTIVE_KEYS, [accountId]);
    if (Number(row!.n) >= MAX_ACTIVE_KEYS) throw tooManyKeys(username, MAX_ACTIVE_KEYS);
  }

  createKey(username: string, key: NewApiKey, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#transaction(async (query) => {
      const [owner] = await query(`SELECT id, username FROM accounts WHERE ${BY_USERNAME} FOR UPDATE`, [username]);
      if (owner === undefined) throw accountNotFound(username);
      await this.#assertRoomForKey(query, owner.id, String(owner.username));
      const record = await this.#insertKey(query, Number(owner.id), key);
      await this.#audit(query, audit, keyCreated(Number(owner.id), record));
      return record;
    });
  }

  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey> {
    return this.#transaction(async (query) => {
      // The owner's row lock first, as createKey takes it: the count of active keys below cannot race another key's creation.
      const [owner] = await query('SELECT a.id FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key_id = $1 FOR UPDATE OF a', [keyId]);
      if (owner === undefined) throw keyNotFound(keyId);
      // Read after the locks are held, so a roll that waited for another sees that one's rolled_into. now() is the
      // transaction's instant, the successor's created_at too: its lifetime comes out exactly the old key's.
      const [row] = await query(
        `SELECT ${KEY_COLUMNS}, k.expires_at <= now() AS expired, now() AS now FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1 FOR UPDATE OF k`,
        [keyId],
      );
      if (row === undefined) throw keyNotFound(keyId);
      const old = toKey(row);
      const now = row.now as Date;
      // A rolled key is refused first, whatever its state now: every roll that loses a race gets the same answer.
      if (old.rolledInto !== null) throw keyAlreadyRolled(keyId, old.rolledInto, await this.#keyIn(query, old.rolledInto), now);
      if (old.revokedAt !== null) throw keyInactive(keyId, `was revoked at ${old.revokedAt}`);
      if (row.expired === true) throw keyInactive(keyId, `expired at ${old.expiresAt}`);
      // Check and set in one statement, besides the row lock: two rolls can never both mark the key.
      // The overlap never lengthens a key's life: one already due to expire sooner keeps its own time.
      const set = await query(
        'UPDATE api_keys SET expires_at = least(expires_at, $2), rolled_into = $3 WHERE key_id = $1 AND rolled_into IS NULL RETURNING key_id',
        [keyId, oldExpiresAt, successor.keyId],
      );
      if (set.length !== 1) throw keyAlreadyRolled(keyId, String((await this.#keyIn(query, keyId))?.rolledInto), null, now);
      await this.#assertRoomForKey(query, owner.id, old.username);
      const created = await this.#insertKey(query, Number(owner.id), {
        ...successor,
        label: old.label,
        scope: old.scope,
        expiresAt: successorExpiry(old, now.getTime()),
      });
      const updated = (await this.#keyIn(query, keyId))!;
      await this.#audit(query, audit, keyRolled(Number(owner.id), old, updated, created));
      return { old: updated, successor: created };
    });
  }

  async #keyIn(query: Query, keyId: string): Promise<ApiKeyRecord | null> {
    const [row] = await query(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1`, [keyId]);
    return row === undefined ? null : toKey(row);
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

  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#transaction(async (query) => {
      // Revoking twice keeps the first time: the record says when the key stopped working, and the trail says it once.
      const [before] = await query('SELECT revoked_at FROM api_keys WHERE key_id = $1 FOR UPDATE', [keyId]);
      if (before === undefined) throw keyNotFound(keyId);
      const [row] = await query(
        `UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now())
         FROM accounts a WHERE a.id = k.account_id AND k.key_id = $1
         RETURNING ${KEY_COLUMNS}, a.id AS account_id`,
        [keyId],
      );
      if (row === undefined) throw keyNotFound(keyId);
      const key = toKey(row);
      if (before.revoked_at === null) {
        await this.#audit(query, audit, {
          action: 'key.revoked',
          accountId: Number(row.account_id),
          username: key.username,
          changes: { key_id: { old: keyId, new: keyId }, revoked_at: { old: null, new: key.revokedAt } },
        });
      }
      return key;
    });
  }

  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent> {
    return this.#transaction((query) => insertAuditEvent(query, audit, event));
  }

  listAudit(query: AuditQuery = {}): Promise<AuditEvent[]> {
    return selectAuditEvents((text, values) => this.#query(text, values), query);
  }

  pruneAudit(before: Date): Promise<number> {
    return deleteAuditEventsBefore((text, values) => this.#query(text, values), before);
  }

  async findCredential(keyId: string): Promise<Credential | null> {
    const row = await this.#one(
      `SELECT k.key_id, k.secret_hash, k.revoked_at, k.scope, k.expires_at, a.id, a.username, a.name, a.timezone, a.premium, a.created_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1`,
      [keyId],
    );
    if (row === undefined) return null;
    return {
      keyId: String(row.key_id),
      hash: row.secret_hash as Buffer, // a Buffer is a Uint8Array: no copy
      revoked: row.revoked_at !== null,
      scope: String(row.scope) as KeyScope,
      expiresAtMs: row.expires_at === null ? null : (row.expires_at as Date).getTime(),
      account: toAccount(row),
    };
  }

  async touchKey(keyId: string, usedAt: Date): Promise<void> {
    await this.#query('UPDATE api_keys SET last_used_at = $2 WHERE key_id = $1', [keyId, usedAt]);
  }

  async pageAccounts(afterId: number | null, limit: number): Promise<Account[]> {
    return (await this.#query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > $1 ORDER BY id LIMIT $2`, [afterId ?? 0, limit])).map(toAccount);
  }

  async createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord> {
    try {
      return await this.#transaction(async (query) => {
        const created = await adminTokenRows.insertAdminToken(query, token);
        await this.#audit(query, audit, adminTokenCreated(created));
        return created;
      });
    } catch (error) {
      const broken = brokenConstraint(error);
      if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'admin_tokens_pkey') throw adminTokenExists(token.tokenId);
      throw error;
    }
  }

  async listAdminTokens(): Promise<AdminTokenRecord[]> {
    return adminTokenRows.selectAdminTokens(this.#statementQuery);
  }

  async revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord> {
    return this.#transaction(async (query) => {
      const before = await adminTokenRows.lockAdminToken(query, tokenId);
      if (before === null) throw adminTokenNotFound(tokenId);
      if (before.revokedAt !== null) return before;
      const revoked = await adminTokenRows.markAdminTokenRevoked(query, tokenId);
      await this.#audit(query, audit, adminTokenRevoked(revoked));
      return revoked;
    });
  }

  async findAdminToken(tokenId: string): Promise<AdminCredential | null> {
    return adminTokenRows.selectAdminCredential(this.#statementQuery, tokenId);
  }

  async touchAdminToken(tokenId: string, usedAt: Date): Promise<void> {
    await adminTokenRows.stampAdminTokenUse(this.#statementQuery, tokenId, usedAt);
  }

  // Webhooks (src/webhooks/): the outbox rows are written by insertAuditEvent, beside each audited change.
  readonly #statementQuery: Query = (text, values) => this.#query(text, values);

  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.#transaction((query) => webhookRows.insertEndpoint(query, endpoint));
  }

  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]> {
    return webhookRows.selectEndpointPage(this.#statementQuery, after, limit);
  }

  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
    return this.#transaction((query) => webhookRows.deleteEndpoint(query, endpointId));
  }

  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint> {
    return webhookRows.updateEndpointEnabled(this.#statementQuery, endpointId, enabled, reason ?? null);
  }

  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    return webhookRows.claimDeliveries(this.#statementQuery, owner, limit, now, leaseUntil);
  }

  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }> {
    return this.#transaction((query) => webhookRows.recordAttempt(query, claim, outcome));
  }

  releaseWebhookDeliveries(owner: string): Promise<void> {
    return webhookRows.releaseLeases(this.#statementQuery, owner);
  }

  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
    return webhookRows.selectAttempts(this.#statementQuery, endpointId, limit);
  }

  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]> {
    return this.#transaction((query) => webhookRows.queueRedelivery(query, eventId, endpointId, now));
  }

  webhookOutboxStats(): Promise<OutboxStats> {
    return webhookRows.selectOutboxStats(this.#statementQuery);
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
