// Accounts as the store keeps them: made, found, paged, changed (with If-Match and Idempotency-Key) and deleted; no SQL here.
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

/** Conditions and records that commit with an account update (and its audit entry), or not at all. */
export interface AccountUpdateOptions {
  /**
   * Checked against the account as it is inside the update's transaction: when false, the update fails with
   * precondition_failed and nothing is written (If-Match). Must be synchronous and pure.
   */
  readonly expect?: (current: Account) => boolean;
  /**
   * Completes this held key with the answer built from the updated account, in the same transaction as the update. When the
   * key is no longer held with this token (its lease ran out and another request took it), the update fails with
   * idempotency_key_in_use and nothing is written.
   */
  readonly idempotency?: { readonly held: HeldIdempotencyKey; readonly answer: (updated: Account) => StoredAnswer };
}

export interface AccountStore {
  // Every change takes an `audit` actor: given, the change's audit entry (and its webhook event, src/webhooks/) is written
  // in the change's own transaction, so all survive a crash or none does. Without one nothing is recorded (tests, the sandbox's seeding); the domain
  // operations (src/operations/) always give one. A change that changes nothing (same value, revoked twice) records nothing.
  createAccount(account: NewAccount, audit?: AuditActor): Promise<Account>;
  /** Both or neither: an account never exists without this key, not even for a moment (the sandbox's demo accounts). */
  createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account>;
  findAccount(username: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  /** Counts every row: for tools and tests, never at start (hasAccounts), as it grows with the table. */
  countAccounts(): Promise<number>;
  /** Whether any account exists, at the cost of one index probe whatever the table's size. */
  hasAccounts(): Promise<boolean>;
  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account>;
  /** By id, which is never reused: an account deleted and created again under the same name is not the one meant. */
  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account>;
  deleteAccount(username: string, audit?: AuditActor): Promise<void>;
  /**
   * Like every change, the actor (when given) is recorded in the audit trail in the change's own transaction; the options'
   * condition is checked and their idempotent answer stored in that same transaction.
   */
  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account>;
  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account>;

  /** Accounts by id, those after `afterId` (null: from the first), at most `limit`: the admin API's cursor paging. */
  pageAccounts(afterId: number | null, limit: number): Promise<Account[]>;
}
