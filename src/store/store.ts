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

/** A token for the admin API, as listed: never its secret. */
export interface AdminTokenRecord {
  readonly tokenId: string;
  readonly label: string;
  readonly displayPrefix: string;
  /** Who made it: `cli:<os user>`. */
  readonly createdBy: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

export interface NewAdminToken {
  readonly tokenId: string;
  readonly hash: Uint8Array;
  readonly displayPrefix: string;
  readonly label: string;
  readonly createdBy: string;
}

/** What the admin port's authentication needs in one read. */
export interface AdminCredential {
  readonly tokenId: string;
  readonly hash: Uint8Array;
  readonly revoked: boolean;
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
  updateName(accountId: number, name: string): Promise<Account>;
  updateTimezone(accountId: number, timezone: string): Promise<Account>;

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

  /** Accounts by id, those after `afterId` (null: from the first), at most `limit`: the admin API's cursor paging. */
  pageAccounts(afterId: number | null, limit: number): Promise<Account[]>;

  createAdminToken(token: NewAdminToken): Promise<AdminTokenRecord>;
  /** Every admin token, revoked ones too, oldest first. */
  listAdminTokens(): Promise<AdminTokenRecord[]>;
  /** Fails with admin_token_not_found; revoking twice keeps the first time. */
  revokeAdminToken(tokenId: string): Promise<AdminTokenRecord>;
  findAdminToken(tokenId: string): Promise<AdminCredential | null>;
  /** An admin token's last use; like touchKey, callers need not await it. */
  touchAdminToken(tokenId: string, usedAt: Date): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
