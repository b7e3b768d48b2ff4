// Accounts as the store keeps them: made, found, paged, changed (If-Match, Idempotency-Key) and deleted; no SQL here.
import type { AuditActor } from '../audit/audit-store.ts';
import type { HeldIdempotencyKey, StoredAnswer } from '../idempotency/idempotency-store.ts';
import type { NewApiKey } from '../keys/key-store.ts';
import type { Account } from '../../domain/accounts.ts';

export type { Account } from '../../domain/accounts.ts';

export interface NewAccount {
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
}

/** Committed with the update (and its audit entry), or not at all. */
export interface AccountUpdateOptions {
  /** Checked inside the update's transaction; false: precondition_failed, nothing written (If-Match). Synchronous and pure. */
  readonly expect?: (current: Account) => boolean;
  /** Completed in the update's transaction; a key no longer held (lease lost) fails with idempotency_key_in_use. */
  readonly idempotency?: { readonly held: HeldIdempotencyKey; readonly answer: (updated: Account) => StoredAnswer };
}

export interface AccountStore {
  // `audit` given: the audit entry and webhook event are written in the change's own transaction, all or none survive a
  // crash. Without it nothing is recorded (tests, seeding). A change that changes nothing records nothing.
  createAccount(account: NewAccount, audit?: AuditActor): Promise<Account>;
  /** Both or neither: an account never exists without this key, even for a moment. */
  createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account>;
  findAccount(username: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  /** Grows with the table: for tools and tests, never at start (hasAccounts). */
  countAccounts(): Promise<number>;
  /** One index probe whatever the table's size. */
  hasAccounts(): Promise<boolean>;
  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account>;
  /** By id, never reused: an account recreated under the same name is not the one meant. */
  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account>;
  deleteAccount(username: string, audit?: AuditActor): Promise<void>;
  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account>;
  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account>;

  /**
   * The admin API's cursor paging (null: from the first), oldest first; with `usernamePrefix`, only the accounts whose username
   * starts with it, ignoring case (`_`, `%` and `\` in it match only themselves).
   */
  pageAccounts(afterId: number | null, limit: number, usernamePrefix?: string): Promise<Account[]>;
}
