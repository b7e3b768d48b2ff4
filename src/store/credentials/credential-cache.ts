// A bounded in-process copy of the rows authentication reads, for engines that know exactly when another connection
// changed the database (SQLite): cleared then, told of its own writes, so it never answers a row older than the last commit.
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
  /** Never a verdict: compared to the clock at every request. */
  readonly expiresAtMs: number | null;
  readonly accountId: number;
}

export class CredentialCache {
  readonly #maxEntries: number;
  // Apart, so an account's own write updates it once, whatever keys it has.
  readonly #keys = new Map<string, CachedKey>();
  readonly #accounts = new Map<number, Account>();

  /** 0: off, every lookup misses. */
  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

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
      // Oldest first (Map insertion order); its account stays until the next clear.
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

  /** Later lookups return the row as written. */
  accountChanged(account: Account): void {
    if (this.#accounts.has(account.id)) this.#accounts.set(account.id, account);
  }

  /** Revoked or rolled: the next lookup reads it again. */
  keyChanged(keyId: string): void {
    this.#keys.delete(keyId);
  }

  clear(): void {
    this.#keys.clear();
    this.#accounts.clear();
  }
}
