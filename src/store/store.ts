// The store interface: everything the routes and the CLI need from a database, engine-agnostic.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { EnvironmentSource } from './deployment.ts';

export interface Account {
  readonly id: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  readonly createdAt: string;
}

export interface NewAccount {
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
}

export interface ApiKeyRecord {
  readonly keyId: string;
  readonly username: string;
  readonly label: string | null;
  readonly displayPrefix: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

export interface NewApiKey {
  readonly keyId: string;
  readonly hash: Uint8Array;
  readonly displayPrefix: string;
  readonly label: string | null;
}

/** What authentication needs in one read: the key's hash and state, and its owner. */
export interface Credential {
  readonly keyId: string;
  readonly hash: Uint8Array;
  readonly revoked: boolean;
  readonly account: Account;
}

/** An answer kept for an idempotency key, replayed byte for byte: its status, the headers replayed with it, and its body. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/** One account's idempotency key, and the token its holder got when claiming it (so a holder whose lease ran out cannot finish). */
export interface HeldIdempotencyKey {
  readonly accountId: number;
  readonly key: string;
  readonly token: string;
}

export interface IdempotencyKeyClaim extends HeldIdempotencyKey {
  /** Names the request (method, path, body...): the same key with another fingerprint is another request. */
  readonly fingerprint: string;
  /** How long the claim holds while the request runs; past it another request may take the key over (its holder crashed). */
  readonly leaseMs: number;
  /** How long the key is kept from now, answered or not; past it the key is free again and pruning deletes it. */
  readonly ttlMs: number;
}

/** What claiming found: the key is now the caller's, or another request holds it, or it was answered already. */
export type IdempotencyClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'in_progress'; readonly fingerprint: string }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly answer: StoredAnswer };

/** Conditions and records that commit with an account update, or not at all. */
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

export interface MigrationReport {
  readonly applied: readonly number[];
  readonly current: number;
  /** The environment the database belongs to: always the store's own, or migrate would have failed. */
  readonly environment: KeyEnvironment;
  /** How this migrate decided the environment, when it recorded it; null when the database already recorded it. */
  readonly environmentRecorded: EnvironmentSource | null;
}

export interface MigrateOptions {
  /**
   * The operator's decision for a database that records no environment yet and holds keys of both: record the store's own.
   * Without it such a database is refused; with it, a database that already records an environment is still only checked.
   */
  readonly recordEnvironment?: boolean;
}

/**
 * Stores raise `DomainError`s (not_found, conflict, unavailable) and never HTTP errors.
 * Every method is async so an engine behind a network slots in without touching callers.
 */
export interface Store {
  readonly engine: string;
  /** The environment this store was opened for; a database of the other is refused, however it was reached (deployment.ts). */
  readonly environment: KeyEnvironment;
  /**
   * Applies missing migrations, then records the database's environment if it has none yet, or checks it, atomically:
   * of two stores of different environments migrating one new database at once, exactly one succeeds.
   * Fails with `database_environment_mismatch` or `database_environment_undecided` (then the report is never returned).
   */
  migrate(options?: MigrateOptions): Promise<MigrationReport>;
  /**
   * Fails with `schema_too_new` when the database was migrated by a newer build, `schema_outdated` when it lacks migrations,
   * and `database_environment_mismatch` (or `_unrecorded`) unless it records the store's environment.
   */
  checkSchema(): Promise<void>;

  createAccount(account: NewAccount): Promise<Account>;
  /** Both or neither: an account never exists without this key, not even for a moment (the sandbox's demo accounts). */
  createAccountWithKey(account: NewAccount, key: NewApiKey): Promise<Account>;
  findAccount(username: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  countAccounts(): Promise<number>;
  setPremium(username: string, premium: boolean): Promise<Account>;
  /** By id, which is never reused: an account deleted and created again under the same name is not the one meant. */
  updatePremium(accountId: number, premium: boolean): Promise<Account>;
  deleteAccount(username: string): Promise<void>;
  updateName(accountId: number, name: string, options?: AccountUpdateOptions): Promise<Account>;
  updateTimezone(accountId: number, timezone: string, options?: AccountUpdateOptions): Promise<Account>;

  /**
   * Claims an account's idempotency key atomically: of two claims at once, exactly one gets 'claimed'. A key held past its
   * lease, or kept past its time to live, is claimed afresh.
   */
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome>;
  /** Records the answer for a held key (one that changed nothing); false when the key is no longer held with this token. */
  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean>;
  /** Gives a held key up (the request failed in a way worth retrying); nothing when it is no longer held with this token. */
  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void>;
  /** Deletes keys kept past their time to live; resolves with how many. */
  pruneIdempotencyKeys(): Promise<number>;

  createKey(username: string, key: NewApiKey): Promise<ApiKeyRecord>;
  listKeys(username: string): Promise<ApiKeyRecord[]>;
  revokeKey(keyId: string): Promise<ApiKeyRecord>;
  findCredential(keyId: string): Promise<Credential | null>;
  /**
   * Records a key's last use. Callers need not await it: a missed stamp must fail nothing, so a caller that does not wait
   * catches the rejection and logs it. SQLite queues it for its next write batch and never makes it wait for a lock;
   * PostgreSQL writes it at once.
   */
  touchKey(keyId: string, usedAt: Date): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
