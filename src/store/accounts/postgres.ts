// Accounts in PostgreSQL: each change with its audit entry, webhook event and idempotent answer in one transaction, or in
// one statement where that saves round trips on the public POSTs.
import { newEventId } from '../../domain/webhooks/events.ts';
import { accountCreated, accountDeleted, keyCreated } from '../audit/audit-changes.ts';
import { AUDIT_ENTRY_OF_UPDATE, auditChange, insertAudited } from '../audit/postgres.ts';
import type { AuditActor } from '../audit/audit-store.ts';
import { completeKey, lockHeldKey } from '../idempotency/postgres.ts';
import { insertKey, KEY_OF_NEW_ACCOUNT, keyFailure, keyOfNewAccountValues } from '../keys/postgres.ts';
import type { NewApiKey } from '../keys/key-store.ts';
import { brokenConstraint, UNIQUE_VIOLATION } from '../postgres/pg-errors.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import type { Query, Row } from '../postgres/query.ts';
import { iso } from '../postgres/query.ts';
import { accountGone, accountNotFound, idempotencyKeyInUse, preconditionFailed, usernameTaken } from '../store-errors.ts';
import { WEBHOOK_EVENT_OF_UPDATE } from '../webhooks/postgres-outbox.ts';
import type { Account, AccountStore, AccountUpdateOptions, NewAccount } from './account-store.ts';
import { ACCOUNT_COLUMNS, toAccount } from './account-rows.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';
import { likePrefix } from '../like-pattern.ts';

const BY_USERNAME = 'lower(username) = lower($1)';

function createFailure(error: unknown, account: NewAccount, key?: NewApiKey): unknown {
  const broken = brokenConstraint(error);
  if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'accounts_username_unique') return usernameTaken(account.username);
  return key === undefined ? error : keyFailure(error, key);
}

async function insertAccount(query: Query, account: NewAccount): Promise<Account> {
  const [row] = await query(
    `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
     VALUES ($1, $2, $3, $4, now(), now()) RETURNING ${ACCOUNT_COLUMNS}`,
    [account.username, account.name, account.timezone, account.premium],
  );
  return toAccount(row!, POSTGRES_VALUES);
}

export class PostgresAccounts extends PostgresPart implements AccountStore {
  async createAccount(account: NewAccount, audit?: AuditActor): Promise<Account> {
    try {
      return await insertAudited(this.engine, audit, (query) => insertAccount(query, account), accountCreated);
    } catch (error) {
      throw createFailure(error, account);
    }
  }

  async createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account> {
    if (audit !== undefined) {
      try {
        return await this.engine.transaction(async (query) => {
          const created = await insertAccount(query, account);
          await auditChange(query, audit, accountCreated(created));
          const record = await insertKey(query, created.id, key);
          await auditChange(query, audit, keyCreated(created.id, record));
          return created;
        });
      } catch (error) {
        throw createFailure(error, account, key);
      }
    }
    try {
      // One statement: either both rows stay or neither (KEY_OF_NEW_ACCOUNT).
      const row = await this.engine.one(
        `WITH a AS (
           INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
           VALUES ($1, $2, $3, $4, now(), now()) RETURNING ${ACCOUNT_COLUMNS}
         ), ${KEY_OF_NEW_ACCOUNT}
         SELECT * FROM a`,
        [account.username, account.name, account.timezone, account.premium, ...keyOfNewAccountValues(key)],
      );
      return toAccount(row!, POSTGRES_VALUES);
    } catch (error) {
      throw createFailure(error, account, key);
    }
  }

  async findAccount(username: string): Promise<Account | null> {
    const row = await this.engine.one(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${BY_USERNAME}`, [username]);
    return row === undefined ? null : toAccount(row, POSTGRES_VALUES);
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.engine.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`)).map((row) => toAccount(row, POSTGRES_VALUES));
  }

  async countAccounts(): Promise<number> {
    return Number((await this.engine.one('SELECT count(*) AS n FROM accounts'))!.n);
  }

  async hasAccounts(): Promise<boolean> {
    return (await this.engine.one('SELECT EXISTS (SELECT 1 FROM accounts) AS any'))!.any === true;
  }

  /** The prefix's condition only when given, so the plan can use migration 012's text_pattern_ops index on lower(username). */
  async pageAccounts(afterId: number | null, limit: number, usernamePrefix?: string): Promise<Account[]> {
    const byPrefix = usernamePrefix === undefined ? '' : `AND lower(username) LIKE $3 ESCAPE '\\'`;
    const values = usernamePrefix === undefined ? [afterId ?? 0, limit] : [afterId ?? 0, limit, likePrefix(usernamePrefix.toLowerCase())];
    const rows = await this.engine.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > $1 ${byPrefix} ORDER BY id LIMIT $2`, values);
    return rows.map((row) => toAccount(row, POSTGRES_VALUES));
  }

  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#setPremium(BY_USERNAME, username, premium, audit, () => accountNotFound(username));
  }

  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#setPremium('id = $1', accountId, premium, audit, accountGone);
  }

  /** Locked while its old value is read, so the entry's old value is the one replaced. */
  #setPremium(where: string, which: unknown, premium: boolean, audit: AuditActor | undefined, missing: () => Error): Promise<Account> {
    return this.engine.transaction(async (query) => {
      const [before] = await query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${where} FOR UPDATE`, [which]);
      if (before === undefined) throw missing();
      const [row] = await query(`UPDATE accounts SET premium = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [
        before.id,
        premium,
      ]);
      const updated = toAccount(row!, POSTGRES_VALUES);
      if (before.premium !== premium) {
        await auditChange(query, audit, {
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
    return this.engine.transaction(async (query) => {
      // Its keys go in the same statement, through ON DELETE CASCADE.
      const [row] = await query(`DELETE FROM accounts WHERE ${BY_USERNAME} RETURNING ${ACCOUNT_COLUMNS}`, [username]);
      if (row === undefined) throw accountNotFound(username);
      await auditChange(query, audit, accountDeleted(toAccount(row, POSTGRES_VALUES)));
    });
  }

  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#updateAccount(accountId, 'name', name, audit, options);
  }

  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#updateAccount(accountId, 'timezone', timezone, audit, options);
  }

  /**
   * One UPDATE of one column: the row lock serialises writers. With an actor alone still one statement (old value read under
   * the lock, audit entry and webhook event inserted only on a change); with If-Match or an idempotency key, #updateChecked.
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
      const row = await this.engine.one(
        `UPDATE accounts SET ${column} = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
        [accountId, value],
      );
      if (row === undefined) throw accountGone();
      return toAccount(row, POSTGRES_VALUES);
    }
    const row = await this.engine.one(
      `WITH old AS (SELECT id, ${column} AS value FROM accounts WHERE id = $1 FOR UPDATE),
            changed AS (
              UPDATE accounts a SET ${column} = $2::text, updated_at = now() FROM old WHERE a.id = old.id
              RETURNING a.id, a.username, a.name, a.timezone, a.premium, a.created_at, old.value AS old_value
            ),
            ${AUDIT_ENTRY_OF_UPDATE(column)},
            ${WEBHOOK_EVENT_OF_UPDATE(column)}
       SELECT ${ACCOUNT_COLUMNS} FROM changed`,
      [accountId, value, audit.actor, audit.requestId, audit.address, newEventId()],
    );
    if (row === undefined) throw accountGone();
    return toAccount(row, POSTGRES_VALUES);
  }

  /** The row lock first holds off other writers until condition, update, audit entry and answer commit together. */
  #updateChecked(accountId: number, column: 'name' | 'timezone', value: string, audit: AuditActor | undefined, options: AccountUpdateOptions): Promise<Account> {
    return this.engine.transaction(async (query) => {
      const [current] = await query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
      if (current === undefined) throw accountGone();
      const before = toAccount(current, POSTGRES_VALUES);
      if (options.expect !== undefined && !options.expect(before)) throw preconditionFailed();
      const idempotency = options.idempotency;
      if (idempotency !== undefined && !(await lockHeldKey(query, idempotency.held))) throw idempotencyKeyInUse();
      const [row] = await query(`UPDATE accounts SET ${column} = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [
        accountId,
        value,
      ]);
      const updated = toAccount(row!, POSTGRES_VALUES);
      if (before[column] !== value) {
        await auditChange(query, audit, {
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
}
