// The embedded default store: SQLite through node:sqlite, in WAL mode so the CLI can write while the server runs.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { backup, DatabaseSync, type StatementSync } from 'node:sqlite';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { DomainError } from '../../domain/errors.ts';
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
import { assertNotNewer, assertSchemaCurrent, loadMigrations, type Migration } from '../migrations.ts';
import { CredentialCache } from '../credential-cache.ts';
import { assertEnvironment, environmentUnrecorded } from '../deployment.ts';
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
import { claimKey, completeKey, holdsKey, pruneKeys, releaseKey } from '../idempotency/sqlite.ts';
import { adminTokenCreated, adminTokenRevoked } from '../admin-token-changes.ts';
import * as adminTokenRows from '../admin-tokens/sqlite.ts';
import { accountCreated, accountDeleted, keyCreated, keyRolled, successorExpiry } from '../audit-changes.ts';
import { deleteAuditEventsBefore, insertAuditEvent, selectAuditEvents } from '../audit/sqlite.ts';
import { readEnvironment, recordEnvironment } from './deployment.ts';
import * as webhookRows from '../webhooks/sqlite.ts';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryAttempt,
  NewWebhookEndpoint,
  OutboxStats,
  WebhookEndpoint,
  WebhookEndpointPosition,
} from '../webhooks/webhook-store.ts';
import { retryWhileLocked } from './lock-wait.ts';
import { isBusy, SQLITE_CONSTRAINT_FOREIGNKEY, SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE, translate } from './sqlite-errors.ts';
import { WalIndexHeader } from './wal-index-header.ts';
import { WriteQueue, type QueuedWrite } from './write-queue.ts';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:'. */
  readonly path: string;
  /** Which environment this store serves: a database recorded as the other is refused (deployment.ts). */
  readonly environment: KeyEnvironment;
  /** FULL survives power loss; NORMAL survives a process crash only. */
  readonly synchronous: 'full' | 'normal';
  /** How long a statement waits for a lock another connection holds, on timers (see lock-wait.ts), before store_busy. */
  readonly busyTimeoutMs: number;
  /** Credentials kept in memory between requests (0: none); see credential-cache.ts for why this is never stale. */
  readonly credentialCacheSize?: number;
}

type Row = Record<string, unknown>;

/** POST /user, POST /settings: the caller is answered with the row once its batch is committed. */
interface QueuedUpdate extends QueuedWrite {
  readonly accountId: number;
  readonly column: 'name' | 'timezone';
  readonly value: string;
  readonly audit: AuditActor | undefined;
  readonly options: AccountUpdateOptions | undefined;
  succeed(account: Account): void;
}

/** A key's last-used time: written with the next batch, and never worth a caller's wait for a lock. */
interface QueuedStamp extends QueuedWrite {
  readonly keyId: string;
  readonly usedAt: string;
  succeed(): void;
}

type QueuedBatchWrite = QueuedUpdate | QueuedStamp;

function toAccount(row: Row): Account {
  return {
    id: Number(row.id),
    username: String(row.username),
    name: String(row.name),
    timezone: String(row.timezone),
    premium: Number(row.premium) === 1,
    createdAt: String(row.created_at),
  };
}

function toKey(row: Row): ApiKeyRecord {
  return {
    keyId: String(row.key_id),
    username: String(row.username),
    label: row.label === null ? null : String(row.label),
    displayPrefix: String(row.display_prefix),
    scope: String(row.scope) as KeyScope,
    createdAt: String(row.created_at),
    expiresAt: row.expires_at === null ? null : String(row.expires_at),
    lastUsedAt: row.last_used_at === null ? null : String(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : String(row.revoked_at),
    rolledInto: row.rolled_into === null ? null : String(row.rolled_into),
  };
}



const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switching a database to WAL takes an exclusive lock. Two processes opening a new database at the same instant (two CLI
 * commands, say) can deadlock on it, and SQLite then answers SQLITE_BUSY at once instead of calling the busy handler; so
 * this waits and retries, synchronously (it runs while opening), for as long as the busy timeout allows.
 */
export function enableWal(db: Pick<DatabaseSync, 'exec'>, busyTimeoutMs: number, now: () => number = Date.now): void {
  const deadline = now() + busyTimeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, Math.min(50, 2 ** attempt));
    }
  }
}

const ACCOUNT_COLUMNS = 'id, username, name, timezone, premium, created_at';
// Built once: every POST /settings and POST /user runs one of these, and #statement finds its prepared form by this text.
const UPDATE_ACCOUNT = {
  name: `UPDATE accounts SET name = ?, updated_at = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`,
  timezone: `UPDATE accounts SET timezone = ?, updated_at = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`,
} as const;
const KEY_COLUMNS =
  'k.key_id, a.username, k.label, k.display_prefix, k.scope, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.rolled_into';
/** Keys that still open the account at `?` (an ISO instant; every stored time is one, so text order is time order). */
const ACTIVE_KEYS = 'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)';
const STAMP_KEY = 'UPDATE api_keys SET last_used_at = ? WHERE key_id = ?';
/** sqlite3_backup_step's page count: all of them in one step (node:sqlite refuses -1, SQLite's own "all"). */
const EVERY_PAGE = 2 ** 31 - 1;

export class SqliteStore implements Store {
  readonly engine = 'sqlite';
  readonly environment: KeyEnvironment;
  readonly #db: DatabaseSync;
  readonly #migrations: readonly Migration[];
  readonly #statements = new Map<string, StatementSync>();
  readonly #credentials: CredentialCache;
  readonly #dataVersion: StatementSync;
  #seenDataVersion: unknown = undefined;
  /** Null when the cache is off, or the database has no WAL-index header to read: data_version alone then. */
  readonly #walIndex: WalIndexHeader | null;
  /** A look was made in this turn of the event loop: lookups after it wait for #endTurn's (see findCredential). */
  #lookedThisTurn = false;
  #nextLook: Promise<boolean> | null = null;
  #lookDone: ((looked: boolean) => void) | null = null;
  readonly #busyTimeoutMs: number;
  readonly #writes: WriteQueue<QueuedBatchWrite>;

  constructor(options: SqliteStoreOptions) {
    this.environment = options.environment;
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    // Opening (start-up, or a CLI command) may wait for locks inside SQLite; from the last line on, nothing does.
    this.#db = new DatabaseSync(options.path, { enableForeignKeyConstraints: true, timeout: options.busyTimeoutMs });
    enableWal(this.#db, options.busyTimeoutMs);
    this.#db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.#migrations = loadMigrations(join(import.meta.dirname, 'migrations'));
    this.#credentials = new CredentialCache(options.credentialCacheSize ?? 0);
    // Changes when any other connection (another worker, the CLI, a person with sqlite3) commits; never for our own.
    this.#dataVersion = this.#db.prepare('PRAGMA data_version');
    this.#dataVersion.setReturnArrays(true);
    // After a first read transaction, which makes the -shm file if it is not there yet.
    this.#walIndex = this.#credentials.enabled && this.#dataVersion.get() !== undefined ? WalIndexHeader.open(options.path) : null;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#writes = new WriteQueue(options.busyTimeoutMs, this.#commitBatch);
    // SQLite's busy handler sleeps on the calling thread, which here is the event loop: a locked database now answers
    // SQLITE_BUSY at once, and #run and the write queue wait for it on timers, up to busyTimeoutMs.
    this.#db.exec('PRAGMA busy_timeout = 0');
  }

  /** Forgets every cached credential if another connection has committed since the last look. */
  #refreshCache(): void {
    // One read of the WAL-index header: unchanged, nobody has committed since the last look (wal-index-header.ts).
    if (this.#walIndex?.unchanged()) return;
    // Read before data_version, so a commit landing between the two is either counted by it or moves the header again.
    // data_version may throw (locked by a recovery in another connection): the header is then not accepted, so the next
    // look asks again.
    const version = (this.#dataVersion.get() as unknown as unknown[])[0];
    if (version !== this.#seenDataVersion) {
      this.#credentials.clear();
      this.#seenDataVersion = version;
    }
    this.#walIndex?.accept();
  }

  /** Prepared once per SQL text: parsing is most of the cost of a small query. */
  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #run<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      // Locked by another connection: reads in WAL mode almost never are, writes outside the batch (the CLI's) may be.
      if (isBusy(error)) return retryWhileLocked(work, this.#busyTimeoutMs);
      return Promise.reject(translate(error));
    }
  }

  #transaction<T>(work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      // A failed COMMIT may already have rolled back: a second error must not hide the first.
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  #appliedVersions(): number[] {
    this.#db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    return this.#db
      .prepare('SELECT version FROM schema_migrations ORDER BY version')
      .all()
      .map((row) => Number(row.version));
  }

  /** Migrations and the environment's record or check in one transaction: a refused migrate leaves the database as it was. */
  migrate(options: MigrateOptions = {}): Promise<MigrationReport> {
    return this.#run(() =>
      this.#transaction(() => {
        const applied = this.#appliedVersions();
        assertNotNewer(applied, this.#migrations);
        const done = new Set(applied);
        const now = new Date().toISOString();
        const newlyApplied: number[] = [];
        for (const migration of this.#migrations) {
          if (done.has(migration.version)) continue;
          this.#db.exec(migration.sql);
          this.#db
            .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(migration.version, migration.name, now);
          newlyApplied.push(migration.version);
        }
        const recorded = recordEnvironment(this.#db, this.environment, options.recordEnvironment === true);
        assertEnvironment(recorded.environment, this.environment);
        return {
          applied: newlyApplied,
          current: this.#migrations.at(-1)?.version ?? 0,
          environment: recorded.environment,
          environmentRecorded: recorded.recordedNow,
        };
      }),
    );
  }

  checkSchema(): Promise<void> {
    return this.#run(() => {
      assertSchemaCurrent(this.#appliedVersions(), this.#migrations);
      const recorded = readEnvironment(this.#db);
      if (recorded === null) throw environmentUnrecorded();
      assertEnvironment(recorded, this.environment);
    });
  }

  #insertAccount(account: NewAccount): Account {
    const now = new Date().toISOString();
    try {
      const row = this.#statement(
        `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`,
      ).get(account.username, account.name, account.timezone, account.premium ? 1 : 0, now, now);
      return toAccount(row as Row);
    } catch (error) {
      if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_UNIQUE) {
        throw usernameTaken(account.username);
      }
      throw error;
    }
  }

  /** The entry beside the change, when the caller says who made it. */
  #audit(audit: AuditActor | undefined, event: NewAuditEvent): void {
    if (audit !== undefined) insertAuditEvent((sql) => this.#statement(sql), audit, event);
  }

  createAccount(account: NewAccount, audit?: AuditActor): Promise<Account> {
    return this.#run(() =>
      this.#transaction(() => {
        const created = this.#insertAccount(account);
        this.#audit(audit, accountCreated(created));
        return created;
      }),
    );
  }

  createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account> {
    return this.#run(() =>
      this.#transaction(() => {
        const created = this.#insertAccount(account);
        this.#audit(audit, accountCreated(created));
        const record = this.#insertKey(created.id, key);
        this.#audit(audit, keyCreated(created.id, record));
        return created;
      }),
    );
  }

  findAccount(username: string): Promise<Account | null> {
    return this.#run(() => {
      const row = this.#statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE username = ?`).get(username);
      return row === undefined ? null : toAccount(row as Row);
    });
  }

  listAccounts(): Promise<Account[]> {
    return this.#run(() =>
      this.#statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`)
        .all()
        .map((row) => toAccount(row as Row)),
    );
  }

  countAccounts(): Promise<number> {
    return this.#run(() => Number((this.#statement('SELECT count(*) AS n FROM accounts').get() as Row).n));
  }

  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#run(() => {
      const updated = this.#transaction(() => {
        const before = this.#statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE username = ?`).get(username);
        if (before === undefined) throw accountNotFound(username);
        return this.#setPremium(toAccount(before as Row), premium, audit);
      });
      this.#credentials.accountChanged(updated);
      return updated;
    });
  }

  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#run(() => {
      const updated = this.#transaction(() => {
        const before = this.#statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(accountId);
        if (before === undefined) throw accountGone();
        return this.#setPremium(toAccount(before as Row), premium, audit);
      });
      this.#credentials.accountChanged(updated);
      return updated;
    });
  }

  #setPremium(before: Account, premium: boolean, audit: AuditActor | undefined): Account {
    const row = this.#statement(`UPDATE accounts SET premium = ?, updated_at = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`).get(
      premium ? 1 : 0,
      new Date().toISOString(),
      before.id,
    );
    const updated = toAccount(row as Row);
    if (before.premium !== premium) {
      this.#audit(audit, {
        action: 'account.premium_changed',
        accountId: updated.id,
        username: updated.username,
        changes: { premium: { old: before.premium, new: premium } },
      });
    }
    return updated;
  }

  deleteAccount(username: string, audit?: AuditActor): Promise<void> {
    return this.#run(() => {
      try {
        this.#transaction(() => {
          const row = this.#statement(`DELETE FROM accounts WHERE username = ? RETURNING ${ACCOUNT_COLUMNS}`).get(username);
          if (row === undefined) throw accountNotFound(username);
          this.#audit(audit, accountDeleted(toAccount(row as Row)));
        });
      } finally {
        // Its keys go with it (ON DELETE CASCADE): simplest to forget everything, deletions are rare.
        this.#credentials.clear();
      }
    });
  }

  /**
   * One update of the batch, run inside the batch's transaction, which holds the write lock. Every condition (If-Match, the
   * idempotency key still held) is checked before anything is written, so a failed one leaves the batch's other writes as
   * they are; then the account, its audit entry (when the value changed) and the key's answer are written together.
   */
  #updateAccount(write: QueuedUpdate): Account {
    const { accountId, column, value, audit, options = {} } = write;
    let before: Account | undefined;
    if (options.expect !== undefined || audit !== undefined) {
      const current = this.#statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(accountId);
      if (current === undefined) throw accountGone();
      before = toAccount(current as Row);
      if (options.expect !== undefined && !options.expect(before)) throw preconditionFailed();
    }
    const statement = (sql: string) => this.#statement(sql);
    if (options.idempotency !== undefined && !holdsKey(statement, options.idempotency.held)) throw idempotencyKeyInUse();
    const row = this.#statement(UPDATE_ACCOUNT[column]).get(value, new Date().toISOString(), accountId);
    if (row === undefined) {
      throw accountGone();
    }
    const updated = toAccount(row as Row);
    if (before !== undefined && before[column] !== value) {
      this.#audit(audit, {
        action: 'account.updated',
        accountId: updated.id,
        username: updated.username,
        changes: { [column]: { old: before[column], new: value } },
      });
    }
    if (options.idempotency !== undefined) completeKey(statement, options.idempotency.held, options.idempotency.answer(updated));
    return updated;
  }

  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#queueUpdate(accountId, 'name', name, audit, options);
  }

  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#queueUpdate(accountId, 'timezone', timezone, audit, options);
  }

  /** Group commit (write-queue.ts): answered once the batch holding this update (its audit entry and its answer) is committed. */
  #queueUpdate(
    accountId: number,
    column: 'name' | 'timezone',
    value: string,
    audit: AuditActor | undefined,
    options: AccountUpdateOptions | undefined,
  ): Promise<Account> {
    return new Promise((succeed, fail) => this.#writes.add({ accountId, column, value, audit, options, deadline: 0, succeed, fail }));
  }

  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
    return this.#run(() => {
      try {
        return this.#transaction(() => claimKey((sql) => this.#statement(sql), claim, Date.now()));
      } catch (error) {
        // The account was deleted while its own request ran (an admin token is never deleted, only revoked).
        if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_FOREIGNKEY && claim.accountId !== undefined) throw accountGone();
        throw error;
      }
    });
  }

  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean> {
    return this.#run(() => completeKey((sql) => this.#statement(sql), held, answer));
  }

  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void> {
    return this.#run(() => releaseKey((sql) => this.#statement(sql), held));
  }

  pruneIdempotencyKeys(): Promise<number> {
    return this.#run(() => pruneKeys((sql) => this.#statement(sql), Date.now()));
  }

  /** One transaction for the whole batch; throws (rolled back, nobody answered) when it cannot be committed. */
  readonly #commitBatch = (batch: readonly QueuedBatchWrite[]): void => {
    const outcomes = this.#transaction(() =>
      batch.map((write) => {
        if ('keyId' in write) {
          this.#statement(STAMP_KEY).run(write.usedAt, write.keyId);
          return undefined;
        }
        try {
          return this.#updateAccount(write);
        } catch (error) {
          // A deleted account fails its own update only; anything from the engine fails the batch (rolled back).
          if (!(error instanceof DomainError)) throw error;
          return error;
        }
      }),
    );
    // Only now that the batch is committed may the cache hold its rows.
    for (const [index, write] of batch.entries()) {
      const outcome = outcomes[index];
      if ('keyId' in write) {
        write.succeed();
      } else if (outcome instanceof DomainError) {
        write.fail(outcome);
      } else {
        this.#credentials.accountChanged(outcome!);
        write.succeed(outcome!);
      }
    }
  };

  #insertKey(accountId: number, key: NewApiKey, createdAt = new Date()): ApiKeyRecord {
    try {
      this.#statement(
        `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, scope, expires_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        key.keyId,
        accountId,
        key.hash,
        key.displayPrefix,
        key.label,
        key.scope ?? 'write',
        key.expiresAt?.toISOString() ?? null,
        createdAt.toISOString(),
      );
    } catch (error) {
      if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_PRIMARYKEY) {
        throw keyExists(key.keyId);
      }
      throw error;
    }
    return this.#keyById(key.keyId)!;
  }

  /** Inside the transaction that adds a key: refuses the one past MAX_ACTIVE_KEYS. */
  #assertRoomForKey(accountId: number, username: string): void {
    const active = Number((this.#statement(ACTIVE_KEYS).get(accountId, new Date().toISOString()) as Row).n);
    if (active >= MAX_ACTIVE_KEYS) throw tooManyKeys(username, MAX_ACTIVE_KEYS);
  }

  createKey(username: string, key: NewApiKey, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#run(() =>
      this.#transaction(() => {
        const owner = this.#statement('SELECT id, username FROM accounts WHERE username = ?').get(username);
        if (owner === undefined) throw accountNotFound(username);
        this.#assertRoomForKey(Number(owner.id), String(owner.username));
        const record = this.#insertKey(Number(owner.id), key);
        this.#audit(audit, keyCreated(Number(owner.id), record));
        return record;
      }),
    );
  }

  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey> {
    return this.#run(() => {
      const rolled = this.#transaction(() => {
        const row = this.#statement(
          `SELECT ${KEY_COLUMNS}, k.account_id FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`,
        ).get(keyId) as Row | undefined;
        if (row === undefined) throw keyNotFound(keyId);
        const old = toKey(row);
        const accountId = Number(row.account_id);
        // One instant for the checks, the successor's issue and its expiry, so that its lifetime is exactly the old key's.
        const now = new Date();
        // A rolled key is refused first, whatever its state now: every roll that loses a race gets the same answer.
        if (old.rolledInto !== null) throw keyAlreadyRolled(keyId, old.rolledInto, this.#keyById(old.rolledInto), now);
        if (old.revokedAt !== null) throw keyInactive(keyId, `was revoked at ${old.revokedAt}`);
        if (old.expiresAt !== null && old.expiresAt <= now.toISOString()) throw keyInactive(keyId, `expired at ${old.expiresAt}`);
        // The overlap never lengthens a key's life: one already due to expire sooner keeps its own time.
        const expiresAt = old.expiresAt !== null && old.expiresAt < oldExpiresAt.toISOString() ? old.expiresAt : oldExpiresAt.toISOString();
        // Check and set in one statement: the write lock (BEGIN IMMEDIATE) already excludes every other writer, this
        // keeps the rule "rolled once" true even if the read above were ever moved out of the transaction.
        const set = this.#statement('UPDATE api_keys SET expires_at = ?, rolled_into = ? WHERE key_id = ? AND rolled_into IS NULL').run(
          expiresAt,
          successor.keyId,
          keyId,
        );
        if (Number(set.changes) !== 1) throw keyAlreadyRolled(keyId, String(this.#keyById(keyId)?.rolledInto), null, now);
        this.#assertRoomForKey(accountId, old.username);
        const created = this.#insertKey(
          accountId,
          { ...successor, label: old.label, scope: old.scope, expiresAt: successorExpiry(old, now.getTime()) },
          now,
        );
        const updated = this.#keyById(keyId)!;
        this.#audit(audit, keyRolled(accountId, old, updated, created));
        return { old: updated, successor: created };
      });
      this.#credentials.keyChanged(keyId);
      return rolled;
    });
  }

  #keyById(keyId: string): ApiKeyRecord | null {
    const row = this.#statement(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`,
    ).get(keyId);
    return row === undefined ? null : toKey(row as Row);
  }

  listKeys(username: string): Promise<ApiKeyRecord[]> {
    return this.#run(() => {
      const owner = this.#statement('SELECT id FROM accounts WHERE username = ?').get(username);
      if (owner === undefined) throw accountNotFound(username);
      return this.#statement(
        `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.account_id = ? ORDER BY k.created_at, k.key_id`,
      )
        .all(Number(owner.id))
        .map((row) => toKey(row as Row));
    });
  }

  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#run(() => {
      const key = this.#transaction(() => {
        // Revoking twice keeps the first time: the record says when the key stopped working, and the trail says it once.
        const revoked = this.#statement(
          'UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL RETURNING account_id',
        ).get(new Date().toISOString(), keyId);
        const key = this.#keyById(keyId);
        if (key === null) throw keyNotFound(keyId);
        if (revoked !== undefined) {
          this.#audit(audit, {
            action: 'key.revoked',
            accountId: Number(revoked.account_id),
            username: key.username,
            changes: { key_id: { old: keyId, new: keyId }, revoked_at: { old: null, new: key.revokedAt } },
          });
        }
        return key;
      });
      this.#credentials.keyChanged(keyId);
      return key;
    });
  }

  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent> {
    return this.#run(() => this.#transaction(() => insertAuditEvent((sql) => this.#statement(sql), audit, event)));
  }

  listAudit(query: AuditQuery = {}): Promise<AuditEvent[]> {
    return this.#run(() => selectAuditEvents((sql) => this.#statement(sql), query));
  }

  pruneAudit(before: Date): Promise<number> {
    return this.#run(() => deleteAuditEventsBefore((sql) => this.#statement(sql), before));
  }

  /**
   * Performance trick (the credential lookup per turn). Relies on: the WAL-index read (wal-index-header.ts) and setImmediate
   * running in the turn's check phase, before the next poll. Guarded by: test/unit/store/wal-index-header.test.ts and
   * test/unit/store/wal-index-header-locks.test.ts. Figures: docs/operations.md#the-credential-lookup-per-turn
   *
   * A look at the WAL-index header answers for every request read before it, so one look serves many: the first lookup of a
   * turn looks at once and is answered at once (no promise: a server under light load never waits); the lookups after it in
   * the same turn wait for one more look, made for all of them in the turn's check phase.
   */
  findCredential(keyId: string): Credential | null | Promise<Credential | null> {
    if (!this.#credentials.enabled) return this.#readCredential(keyId);
    if (this.#lookedThisTurn) {
      this.#nextLook ??= new Promise((resolve) => {
        this.#lookDone = resolve;
      });
      return this.#nextLook.then((looked) => (looked ? (this.#credentials.get(keyId) ?? this.#readCredential(keyId)) : this.#readCredential(keyId)));
    }
    this.#lookedThisTurn = true;
    setImmediate(this.#endTurn);
    // Answered at once when the cache holds the key and no other connection has committed since: no promise to wait for.
    try {
      this.#refreshCache();
      const cached = this.#credentials.get(keyId);
      if (cached !== undefined) return cached;
    } catch {
      // Locked (a WAL recovery in another connection): the read below waits for it on timers.
    }
    return this.#readCredential(keyId);
  }

  /** In the check phase of a turn that looked: one look for every lookup that came after, then they go on. */
  readonly #endTurn = (): void => {
    this.#lookedThisTurn = false;
    const done = this.#lookDone;
    if (done === null) return;
    this.#nextLook = null;
    this.#lookDone = null;
    let looked = true;
    try {
      this.#refreshCache();
    } catch {
      looked = false; // locked: each waits for its own read
    }
    done(looked);
  };

  #readCredential(keyId: string): Promise<Credential | null> {
    return this.#run(() => {
      if (this.#credentials.enabled) this.#refreshCache();
      const cached = this.#credentials.get(keyId);
      if (cached !== undefined) return cached;
      const row = this.#statement(
        `SELECT k.key_id, k.secret_hash, k.revoked_at, k.scope, k.expires_at, a.id, a.username, a.name, a.timezone, a.premium, a.created_at
         FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`,
      ).get(keyId) as Row | undefined;
      // Unknown key ids are not cached: a guesser cannot fill the cache, and every miss costs the same read.
      if (row === undefined) return null;
      const credential: Credential = {
        keyId: String(row.key_id),
        hash: row.secret_hash as Uint8Array,
        revoked: row.revoked_at !== null,
        scope: String(row.scope) as KeyScope,
        // The expiry, not a verdict: the caller compares it to its clock at every request, so the cache never goes stale on it.
        expiresAtMs: row.expires_at === null ? null : Date.parse(String(row.expires_at)),
        account: toAccount(row),
      };
      this.#credentials.set(credential);
      return credential;
    });
  }

  /**
   * Queued with the account updates and committed in their next batch (a batch of its own when there is none), so a
   * request never writes it itself. The promise settles when the stamp is committed, or as soon as the database is found
   * locked by another connection: the stamp then waits in the queue like any write, and is dropped silently if the lock
   * outlasts busyTimeoutMs (the key's next use past the touch interval stamps it again).
   */
  touchKey(keyId: string, usedAt: Date): Promise<void> {
    return new Promise((succeed, fail) => {
      this.#writes.add({ keyId, usedAt: usedAt.toISOString(), deadline: 0, succeed, fail, locked: succeed });
      if (this.#writes.waitingForLock) succeed();
    });
  }

  /**
   * Writes a consistent copy of the whole database to `path` (overwriting it) while other connections keep reading and
   * writing, and resolves with the number of pages copied. One step, under one read snapshot: a copy made in several steps
   * starts over whenever another connection commits between two of them, so under steady writes it might never finish.
   * In WAL mode that snapshot blocks no writer. Not part of Store: PostgreSQL has pg_dump.
   */
  async backup(path: string): Promise<number> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (;;) {
      try {
        return await backup(this.#db, path, { rate: EVERY_PAGE });
      } catch (error) {
        // A snapshot is refused only for a moment (another connection resetting the WAL): waited out like any lock.
        if (!isBusy(error) || Date.now() >= deadline) throw translate(error);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  pageAccounts(afterId: number | null, limit: number): Promise<Account[]> {
    return this.#run(() =>
      this.#statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > ? ORDER BY id LIMIT ?`)
        .all(afterId ?? 0, limit)
        .map((row) => toAccount(row as Row)),
    );
  }

  createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord> {
    return this.#run(() =>
      this.#transaction(() => {
        const created = adminTokenRows.insertAdminToken(this.#prepare, token, new Date().toISOString());
        this.#audit(audit, adminTokenCreated(created));
        return created;
      }),
    );
  }

  listAdminTokens(): Promise<AdminTokenRecord[]> {
    return this.#run(() => adminTokenRows.selectAdminTokens(this.#prepare));
  }

  revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord> {
    return this.#run(() =>
      this.#transaction(() => {
        const before = adminTokenRows.selectAdminToken(this.#prepare, tokenId);
        if (before === null) throw adminTokenNotFound(tokenId);
        if (before.revokedAt !== null) return before;
        const revoked = adminTokenRows.markAdminTokenRevoked(this.#prepare, tokenId, new Date().toISOString());
        this.#audit(audit, adminTokenRevoked(revoked));
        return revoked;
      }),
    );
  }

  findAdminToken(tokenId: string): Promise<AdminCredential | null> {
    return this.#run(() => adminTokenRows.selectAdminCredential(this.#prepare, tokenId));
  }

  touchAdminToken(tokenId: string, usedAt: Date): Promise<void> {
    return this.#run(() => adminTokenRows.stampAdminTokenUse(this.#prepare, tokenId, usedAt));
  }

  // Webhooks (src/webhooks/): the outbox rows are written by insertAuditEvent, beside each audited change.
  readonly #prepare = (sql: string) => this.#statement(sql);

  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.#run(() => this.#transaction(() => webhookRows.insertEndpoint(this.#prepare, endpoint)));
  }

  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]> {
    return this.#run(() => webhookRows.selectEndpointPage(this.#prepare, after, limit));
  }

  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
    return this.#run(() => this.#transaction(() => webhookRows.deleteEndpoint(this.#prepare, endpointId)));
  }

  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint> {
    return this.#run(() => webhookRows.updateEndpointEnabled(this.#prepare, endpointId, enabled, reason ?? null));
  }

  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    return this.#run(() =>
      webhookRows.anyDue(this.#prepare, now) ? this.#transaction(() => webhookRows.claimDeliveries(this.#prepare, owner, limit, now, leaseUntil)) : [],
    );
  }

  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }> {
    return this.#run(() => this.#transaction(() => webhookRows.recordAttempt(this.#prepare, claim, outcome)));
  }

  releaseWebhookDeliveries(owner: string): Promise<void> {
    return this.#run(() => webhookRows.releaseLeases(this.#prepare, owner));
  }

  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
    return this.#run(() => webhookRows.selectAttempts(this.#prepare, endpointId, limit));
  }

  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]> {
    return this.#run(() => this.#transaction(() => webhookRows.queueRedelivery(this.#prepare, eventId, endpointId, now)));
  }

  webhookOutboxStats(): Promise<OutboxStats> {
    return this.#run(() => webhookRows.selectOutboxStats(this.#prepare));
  }

  ping(): Promise<void> {
    return this.#run(() => {
      this.#statement('SELECT 1').get();
    });
  }

  async close(): Promise<void> {
    // A stamp's caller may not be waiting for it: whatever is still queued is written (or given up on) before closing.
    await this.#writes.drained();
    if (this.#db.isOpen) this.#db.close();
    this.#walIndex?.release();
  }
}
