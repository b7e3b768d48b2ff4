// The store interface: everything the routes and the CLI need from a database, engine-agnostic.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { NewAuditEvent } from '../domain/audit-events.ts';
import type { EnvironmentSource } from './deployment.ts';
import type { WebhookStore } from './webhook-store.ts';

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

/** `write` allows every endpoint; `read` only reads (GET) and the public ones. */
export type KeyScope = 'read' | 'write';

export interface ApiKeyRecord {
  readonly keyId: string;
  readonly username: string;
  readonly label: string | null;
  readonly displayPrefix: string;
  readonly scope: KeyScope;
  readonly createdAt: string;
  /** null: the key never expires. */
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
  /** The id of the key this one was rolled into, if it was. */
  readonly rolledInto: string | null;
}

export interface NewApiKey {
  readonly keyId: string;
  readonly hash: Uint8Array;
  readonly displayPrefix: string;
  readonly label: string | null;
  /** 'write' when not given. */
  readonly scope?: KeyScope;
  /** null or absent: never expires. */
  readonly expiresAt?: Date | null;
}

/** What authentication needs in one read: the key's hash, state, scope and expiry, and its owner. */
export interface Credential {
  readonly keyId: string;
  readonly hash: Uint8Array;
  readonly revoked: boolean;
  readonly scope: KeyScope;
  /** Milliseconds since the epoch, compared to the clock at every request (never a cached verdict); null never expires. */
  readonly expiresAtMs: number | null;
  readonly account: Account;
}

/** An answer kept for an idempotency key, replayed byte for byte: its status, the headers replayed with it, and its body. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/**
 * Whose idempotency key it is: an account's (the public port) or an admin token's (the admin port). Each kind is kept in a
 * table of its own, so a key of one kind can never answer a request of the other.
 */
export type IdempotencyOwner = { readonly accountId: number; readonly adminTokenId?: never } | { readonly adminTokenId: string; readonly accountId?: never };

/** One owner's idempotency key, and the token its holder got when claiming it (so a holder whose lease ran out cannot finish). */
export type HeldIdempotencyKey = IdempotencyOwner & {
  readonly key: string;
  readonly token: string;
};

export type IdempotencyKeyClaim = HeldIdempotencyKey & {
  /** Names the request (method, path, body...): the same key with another fingerprint is another request. */
  readonly fingerprint: string;
  /** How long the claim holds while the request runs; past it another request may take the key over (its holder crashed). */
  readonly leaseMs: number;
  /** How long the key is kept from now, answered or not; past it the key is free again and pruning deletes it. */
  readonly ttlMs: number;
};

/** What claiming found: the key is now the caller's, or another request holds it, or it was answered already. */
export type IdempotencyClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'in_progress'; readonly fingerprint: string }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly answer: StoredAnswer };

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

/** Who made a change and from where: recorded with it in the audit trail, in the change's own transaction. */
export interface AuditActor {
  /** `key:<key id>`, `admin:<token id>` or `cli:<operating-system user>`. */
  readonly actor: string;
  readonly requestId: string | null;
  /** The caller's address; null from the CLI. */
  readonly address: string | null;
}

// The audit entry's shape is a domain definition (webhook events are built from it); kept here too for the store's users.
export { AUDIT_ACTIONS, type AuditAction, type AuditChanges, type FieldChange, type NewAuditEvent } from '../domain/audit-events.ts';

export interface AuditEvent extends NewAuditEvent, AuditActor {
  readonly id: number;
  readonly occurredAt: string;
}

export interface AuditQuery {
  /** Entries of this account (ignoring case), also after it was deleted. */
  readonly username?: string;
  /** Entries at or after this instant. */
  readonly since?: Date;
  /** Entries before this instant (the admin API's time filter). */
  readonly until?: Date;
  /** Entries with an id below this one: the admin API's cursor, walking back in time. */
  readonly beforeId?: number;
  /** At most this many: the newest ones, listed oldest first (default 1000). */
  readonly limit?: number;
}

/** A key rolled into its successor: both as they now are. */
export interface RolledKey {
  readonly old: ApiKeyRecord;
  readonly successor: ApiKeyRecord;
}

/** How many keys an account may have that are neither expired nor revoked. */
export const MAX_ACTIVE_KEYS = 20;

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
export interface Store extends WebhookStore {
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

  // Every change takes an `audit` actor: given, the change's audit entry (and its webhook event, src/webhooks/) is written
  // in the change's own transaction, so all survive a crash or none does. Without one nothing is recorded (tests, the sandbox's seeding); the domain
  // operations (src/operations/) always give one. A change that changes nothing (same value, revoked twice) records nothing.
  createAccount(account: NewAccount, audit?: AuditActor): Promise<Account>;
  /** Both or neither: an account never exists without this key, not even for a moment (the sandbox's demo accounts). */
  createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account>;
  findAccount(username: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  countAccounts(): Promise<number>;
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

  /**
   * Claims an account's or admin token's idempotency key atomically: of two claims at once, exactly one gets 'claimed'. A key held past its
   * lease, or kept past its time to live, is claimed afresh.
   */
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome>;
  /** Records the answer for a held key (one that changed nothing); false when the key is no longer held with this token. */
  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean>;
  /** Gives a held key up (the request failed in a way worth retrying); nothing when it is no longer held with this token. */
  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void>;
  /** Deletes keys (of every owner) kept past their time to live; resolves with how many. */
  pruneIdempotencyKeys(): Promise<number>;

  /** Fails with `too_many_keys` when the account already has MAX_ACTIVE_KEYS keys neither expired nor revoked. */
  createKey(username: string, key: NewApiKey, audit?: AuditActor): Promise<ApiKeyRecord>;
  /**
   * Issues `successor` with the old key's owner, label, scope and lifetime (successorExpiry), and sets the old key to expire at `oldExpiresAt` (or
   * keeps its own expiry when that is sooner), in one step on the key's row: of any number of rolls at once, on any instance, one wins.
   * Fails with `key_not_found`, `key_already_rolled` (it has a successor already), `key_inactive` (revoked or expired) or `too_many_keys`.
   */
  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey>;
  listKeys(username: string): Promise<ApiKeyRecord[]>;
  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord>;
  /**
   * The one method that may answer at once: an engine that holds the row in memory and knows it is current (SQLite's
   * credential cache) returns it without a promise, because authentication runs on every request. Callers accept both.
   */
  findCredential(keyId: string): Credential | null | Promise<Credential | null>;

  /** An entry alone, in a transaction of its own: for changes the store does not make itself (admin tokens). */
  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent>;
  /** Entries, the oldest first, at most `limit` (default 1000) of the newest matching. */
  listAudit(query?: AuditQuery): Promise<AuditEvent[]>;
  /** Deletes entries older than `before`; resolves with how many. */
  pruneAudit(before: Date): Promise<number>;
  /**
   * Records a key's last use. Callers need not await it: a missed stamp must fail nothing, so a caller that does not wait
   * catches the rejection and logs it. SQLite queues it for its next write batch and never makes it wait for a lock;
   * PostgreSQL writes it at once.
   */
  touchKey(keyId: string, usedAt: Date): Promise<void>;

  /** Accounts by id, those after `afterId` (null: from the first), at most `limit`: the admin API's cursor paging. */
  pageAccounts(afterId: number | null, limit: number): Promise<Account[]>;

  /** With `audit`, admin_token.created is written in the same transaction. */
  createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord>;
  /** Every admin token, revoked ones too, oldest first. */
  listAdminTokens(): Promise<AdminTokenRecord[]>;
  /** Fails with admin_token_not_found; revoking twice keeps the first time. */
  revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord>;
  findAdminToken(tokenId: string): Promise<AdminCredential | null>;
  /** An admin token's last use; like touchKey, callers need not await it. */
  touchAdminToken(tokenId: string, usedAt: Date): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
