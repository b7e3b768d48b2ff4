// Accounts' rows in SQLite: made (alone or with their first key), found, paged, changed and deleted, each with its audit entry
// in the same transaction; POST /user and POST /settings go through the engine's group commit.
import { accountCreated, accountDeleted, keyCreated } from '../audit/audit-changes.ts';
import type { AuditActor } from '../audit/audit-store.ts';
import { auditChange } from '../audit/sqlite.ts';
import type { CredentialCache } from '../credentials/credential-cache.ts';
import { completeKey, holdsKey } from '../idempotency/sqlite.ts';
import type { NewApiKey } from '../keys/key-store.ts';
import { insertKey } from '../keys/sqlite.ts';
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { SQLITE_CONSTRAINT_UNIQUE } from '../sqlite/sqlite-errors.ts';
import { accountGone, accountNotFound, idempotencyKeyInUse, preconditionFailed, usernameTaken } from '../store-errors.ts';
import type { Account, AccountStore, AccountUpdateOptions, NewAccount } from './account-store.ts';
import { likePrefix } from '../like-pattern.ts';
import { ACCOUNT_COLUMNS, toAccount } from './account-rows.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';

// Built once: every POST /settings and POST /user runs one of these, and the engine finds its prepared form by this text.
const UPDATE_ACCOUNT = {
  name: `UPDATE accounts SET name = ?, updated_at = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`,
  timezone: `UPDATE accounts SET timezone = ?, updated_at = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`,
} as const;

type UpdatedColumn = keyof typeof UPDATE_ACCOUNT;

function insertAccount(statement: Prepare, account: NewAccount): Account {
  const now = new Date().toISOString();
  try {
    const row = statement(
      `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`,
    ).get(account.username, account.name, account.timezone, account.premium ? 1 : 0, now, now);
    return toAccount(row as Row, SQLITE_VALUES);
  } catch (error) {
    if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_UNIQUE) {
      throw usernameTaken(account.username);
    }
    throw error;
  }
}

/**
 * One update of a group commit's batch, run inside the batch's transaction, which holds the write lock. Every condition
 * (If-Match, the idempotency key still held) is checked before anything is written, so a failed one leaves the batch's other
 * writes as they are; then the account, its audit entry (when the value changed) and the key's answer are written together.
 */
function updateAccount(
  statement: Prepare,
  accountId: number,
  column: UpdatedColumn,
  value: string,
  audit: AuditActor | undefined,
  options: AccountUpdateOptions = {},
): Account {
  let before: Account | undefined;
  if (options.expect !== undefined || audit !== undefined) {
    const current = statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(accountId);
    if (current === undefined) throw accountGone();
    before = toAccount(current as Row, SQLITE_VALUES);
    if (options.expect !== undefined && !options.expect(before)) throw preconditionFailed();
  }
  if (options.idempotency !== undefined && !holdsKey(statement, options.idempotency.held)) throw idempotencyKeyInUse();
  const row = statement(UPDATE_ACCOUNT[column]).get(value, new Date().toISOString(), accountId);
  if (row === undefined) {
    throw accountGone();
  }
  const updated = toAccount(row as Row, SQLITE_VALUES);
  if (before !== undefined && before[column] !== value) {
    auditChange(statement, audit, {
      action: 'account.updated',
      accountId: updated.id,
      username: updated.username,
      changes: { [column]: { old: before[column], new: value } },
    });
  }
  if (options.idempotency !== undefined) completeKey(statement, options.idempotency.held, options.idempotency.answer(updated));
  return updated;
}

export class SqliteAccounts implements AccountStore {
  readonly #engine: SqliteEngine;
  /** Our own commits update it (credentials/sqlite.ts reads it), so it never answers with an older row. */
  readonly #credentials: Pick<CredentialCache, 'accountChanged' | 'clear'>;

  constructor(engine: SqliteEngine, credentials: Pick<CredentialCache, 'accountChanged' | 'clear'>) {
    this.#engine = engine;
    this.#credentials = credentials;
  }

  createAccount(account: NewAccount, audit?: AuditActor): Promise<Account> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        const created = insertAccount(statement, account);
        auditChange(statement, audit, accountCreated(created));
        return created;
      }),
    );
  }

  createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        const created = insertAccount(statement, account);
        auditChange(statement, audit, accountCreated(created));
        const record = insertKey(statement, created.id, key);
        auditChange(statement, audit, keyCreated(created.id, record));
        return created;
      }),
    );
  }

  findAccount(username: string): Promise<Account | null> {
    return this.#engine.run(() => {
      const row = this.#engine.statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE username = ?`).get(username);
      return row === undefined ? null : toAccount(row as Row, SQLITE_VALUES);
    });
  }

  listAccounts(): Promise<Account[]> {
    return this.#engine.run(() =>
      this.#engine
        .statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`)
        .all()
        .map((row) => toAccount(row as Row, SQLITE_VALUES)),
    );
  }

  countAccounts(): Promise<number> {
    return this.#engine.run(() => Number((this.#engine.statement('SELECT count(*) AS n FROM accounts').get() as Row).n));
  }

  hasAccounts(): Promise<boolean> {
    return this.#engine.run(() => Number((this.#engine.statement('SELECT EXISTS (SELECT 1 FROM accounts) AS any').get() as Row).any) === 1);
  }

  /**
   * LIKE ignores ASCII case, as the NOCASE username does, so it reads a range of the username's unique index; only when given,
   * since SQLite plans `(? IS NULL OR username LIKE ?)` as a walk of every account.
   */
  pageAccounts(afterId: number | null, limit: number, usernamePrefix?: string): Promise<Account[]> {
    const byPrefix = usernamePrefix === undefined ? '' : `AND username LIKE ? ESCAPE '\\'`;
    const values = usernamePrefix === undefined ? [afterId ?? 0, limit] : [afterId ?? 0, likePrefix(usernamePrefix), limit];
    return this.#engine.run(() =>
      this.#engine
        .statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > ? ${byPrefix} ORDER BY id LIMIT ?`)
        .all(...values)
        .map((row) => toAccount(row as Row, SQLITE_VALUES)),
    );
  }

  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#engine.run(() => {
      const updated = this.#engine.transaction(() => {
        const before = this.#engine.statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE username = ?`).get(username);
        if (before === undefined) throw accountNotFound(username);
        return this.#setPremium(toAccount(before as Row, SQLITE_VALUES), premium, audit);
      });
      this.#credentials.accountChanged(updated);
      return updated;
    });
  }

  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#engine.run(() => {
      const updated = this.#engine.transaction(() => {
        const before = this.#engine.statement(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(accountId);
        if (before === undefined) throw accountGone();
        return this.#setPremium(toAccount(before as Row, SQLITE_VALUES), premium, audit);
      });
      this.#credentials.accountChanged(updated);
      return updated;
    });
  }

  #setPremium(before: Account, premium: boolean, audit: AuditActor | undefined): Account {
    const row = this.#engine
      .statement(`UPDATE accounts SET premium = ?, updated_at = ? WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`)
      .get(premium ? 1 : 0, new Date().toISOString(), before.id);
    const updated = toAccount(row as Row, SQLITE_VALUES);
    if (before.premium !== premium) {
      auditChange(this.#engine.statement, audit, {
        action: 'account.premium_changed',
        accountId: updated.id,
        username: updated.username,
        changes: { premium: { old: before.premium, new: premium } },
      });
    }
    return updated;
  }

  deleteAccount(username: string, audit?: AuditActor): Promise<void> {
    return this.#engine.run(() => {
      try {
        this.#engine.transaction(() => {
          const row = this.#engine.statement(`DELETE FROM accounts WHERE username = ? RETURNING ${ACCOUNT_COLUMNS}`).get(username);
          if (row === undefined) throw accountNotFound(username);
          auditChange(this.#engine.statement, audit, accountDeleted(toAccount(row as Row, SQLITE_VALUES)));
        });
      } finally {
        // Its keys go with it (ON DELETE CASCADE): simplest to forget everything, deletions are rare.
        this.#credentials.clear();
      }
    });
  }

  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#queueUpdate(accountId, 'name', name, audit, options);
  }

  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#queueUpdate(accountId, 'timezone', timezone, audit, options);
  }

  /** Group commit: answered once the batch holding this update (its audit entry and its answer) is committed. */
  #queueUpdate(
    accountId: number,
    column: UpdatedColumn,
    value: string,
    audit: AuditActor | undefined,
    options: AccountUpdateOptions | undefined,
  ): Promise<Account> {
    return new Promise((succeed, fail) =>
      this.#engine.queue({
        deadline: 0,
        apply: () => updateAccount(this.#engine.statement, accountId, column, value, audit, options),
        // Only now that the batch is committed may the cache hold the row.
        settle: (updated: Account) => {
          this.#credentials.accountChanged(updated);
          succeed(updated);
        },
        fail,
      }),
    );
  }
}
