// The store interface: everything the routes and the CLI need from a database, engine-agnostic.

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

export interface MigrationReport {
  readonly applied: readonly number[];
  readonly current: number;
}

/**
 * Stores raise `DomainError`s (not_found, conflict, unavailable) and never HTTP errors.
 * Every method is async so an engine behind a network slots in without touching callers.
 */
export interface Store {
  readonly engine: string;
  migrate(): Promise<MigrationReport>;
  /** Fails with `schema_too_new` when the database was migrated by a newer build. */
  checkSchema(): Promise<void>;

  createAccount(account: NewAccount): Promise<Account>;
  findAccount(username: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  countAccounts(): Promise<number>;
  setPremium(username: string, premium: boolean): Promise<Account>;
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

  ping(): Promise<void>;
  close(): Promise<void>;
}
