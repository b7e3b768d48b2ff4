// A bounded in-process copy of the rows authentication reads, for engines that can tell cheaply and exactly when
// another connection changed the database (SQLite's data_version). The engine clears it on any such change and tells
// it of its own writes, so it never answers with a row older than the last committed write: no staleness window at all.
//
// Performance trick. Relies on: the engine clearing it on every commit by another connection (SQLite: data_version and the
// WAL-index read) and calling keyChanged/accountChanged on its own writes. Guarded by:
// test/unit/store/credential-cache.test.ts and test/unit/store/wal-index-header.test.ts.
// Figures: docs/operations.md#the-credential-lookup-per-turn
import type { Account, Credential, KeyScope } from '../store.ts';

interface CachedKey {
  readonly hash: Uint8Array;
  readonly revoked: boolean;
  readonly scope: KeyScope;
  /** The expiry itself, never a verdict on it: authentication compares it to the clock at every request. */
  readonly expiresAtMs: number | null;
  readonly accountId: number;
}

export class CredentialCache {
  readonly #maxEntries: number;
  // Keys and accounts are kept apart so that an account's own write updates it once, whatever keys it has.
  readonly #keys = new Map<string, CachedKey>();
  readonly #accounts = new Map<number, Account>();

  /** maxEntries 0 turns the cache off: every lookup misses. */
  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** false when built with maxEntries 0: then there is nothing to keep fresh either. */
  get enabled(): boolean {
    return this.#maxEntries > 0;
  }

  get size(): number {
    return this.#keys.size;
  }

  get(keyId: string): Credential | undefined {
    const key = this.#keys.get(keyId);
    if (key === undefined) return undefined;
    const account = this.#accounts.get(key.accountId);
    if (account === undefined) return undefined;
    return { keyId, hash: key.hash, revoked: key.revoked, scope: key.scope, expiresAtMs: key.expiresAtMs, account };
  }

  set(credential: Credential): void {
    if (this.#maxEntries === 0) return;
    if (this.#keys.size >= this.#maxEntries && !this.#keys.has(credential.keyId)) {
      // The oldest entry goes first (a Map iterates in insertion order); its account stays until the next clear,
      // which is at most one account per key ever cached.
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    if (this.#accounts.size >= this.#maxEntries) this.#accounts.clear();
    this.#keys.set(credential.keyId, {
      hash: credential.hash,
      revoked: credential.revoked,
      scope: credential.scope,
      expiresAtMs: credential.expiresAtMs,
      accountId: credential.account.id,
    });
    this.#accounts.set(credential.account.id, credential.account);
  }

  /** After this process changed an account: later lookups return the row as written. */
  accountChanged(account: Account): void {
    if (this.#accounts.has(account.id)) this.#accounts.set(account.id, account);
  }

  /** After this process changed a key (revoked or rolled it): the next lookup reads it again. */
  keyChanged(keyId: string): void {
    this.#keys.delete(keyId);
  }

  clear(): void {
    this.#keys.clear();
    this.#accounts.clear();
  }
}
