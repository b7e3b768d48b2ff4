// What the store contract needs from each engine, and the small helpers its cases share.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';

import { issueKey, type IssuedKey, type KeyEnvironment } from '../../src/domain/api-keys.ts';
import { DomainError } from '../../src/domain/errors.ts';
import type { NewAccount, NewApiKey, Store } from '../../src/store/store.ts';

export interface MigrationRow {
  readonly version: number;
  readonly name: string;
  readonly appliedAt: string;
}

/** One empty database for one test, with the few ways in that the Store interface deliberately lacks. */
export interface StoreUnderTest {
  /** A live store over a database nobody has migrated yet. */
  readonly store: Store;
  /** Another store over the same database, as a second instance or the CLI would open it (live unless told); cleanup closes it. */
  openAnother(environment?: KeyEnvironment): Store;
  /** Reads schema_migrations behind the stores' backs. */
  migrationRows(): Promise<MigrationRow[]>;
  /** Writes a schema_migrations row behind the stores' backs, as a newer build would have. */
  recordMigration(version: number, name: string): Promise<void>;
  /** Applies migration 001 alone behind the stores' backs, as a build from before the deployment table left a database. */
  migrateLikeVersion1(): Promise<void>;
  /** Adds a key as a version 1 build would have (no scope, no expiry), revoked or not, behind the stores' backs. */
  addKeyLikeVersion1(username: string, key: NewApiKey, revoked: boolean): Promise<void>;
  /** The deployment table's row, read behind the stores' backs; null when there is no row (or no table). */
  recordedEnvironment(): Promise<{ environment: string; decidedBy: string } | null>;
  /** A token that changes whenever the endpoint's row is written (an UPDATE, even one that changes no value); read behind the stores' backs. */
  endpointRowVersion(endpointId: string): Promise<string>;
  /** Stamps an admin token revoked with a bare UPDATE behind the stores' backs, as revokeAdminToken does minus its other writes. */
  revokeAdminTokenBehindTheStore(tokenId: string): Promise<void>;
  /** Closes every store it opened and throws the database away. */
  cleanup(): Promise<void>;
}

export type MakeStore = () => Promise<StoreUnderTest>;

/** A fresh database for this test, thrown away when it ends; migrated unless asked not to be. */
export async function freshStore(t: TestContext, makeStore: MakeStore, options: { migrated?: boolean } = {}): Promise<StoreUnderTest> {
  const subject = await makeStore();
  t.after(() => subject.cleanup());
  if (options.migrated !== false) await subject.store.migrate();
  return subject;
}

export function account(username: string, overrides: Partial<NewAccount> = {}): NewAccount {
  return { username, name: username, timezone: 'UTC', premium: false, ...overrides };
}

export function newKey(key: IssuedKey, label: string | null = null): NewApiKey {
  return { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label };
}

/** A new live key with the scope and expiry given. */
export function scopedKey(scope: 'read' | 'write', expiresAt: Date | null = null, label: string | null = null): NewApiKey {
  return { ...newKey(issueKey('live'), label), scope, expiresAt };
}

/** The account the key cases issue their keys to. */
export async function withOwner(store: Store, username = 'alice'): Promise<void> {
  await store.createAccount(account(username, { premium: true }));
}

/** Matches a rejection by its stable code (and kind when given). */
export function domainCode(code: string, kind?: string) {
  return (error: unknown) => {
    assert.ok(error instanceof DomainError, `expected a DomainError '${code}', got ${String(error)}`);
    assert.equal(error.code, code, `wrong error code (message: ${error.message})`);
    if (kind !== undefined) assert.equal(error.kind, kind, `wrong kind for ${code}`);
    return true;
  };
}

export function isDate(value: string): boolean {
  return !Number.isNaN(Date.parse(value));
}
