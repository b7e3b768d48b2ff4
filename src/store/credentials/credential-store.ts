// What authentication asks of the store on every request: a key's credential in one read, and its last use; no SQL here.
import type { Account } from '../accounts/account-store.ts';
import type { KeyScope } from '../keys/key-store.ts';

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

export interface CredentialStore {
  /**
   * The one method that may answer at once: an engine that holds the row in memory and knows it is current (SQLite's
   * credential cache) returns it without a promise, because authentication runs on every request. Callers accept both.
   */
  findCredential(keyId: string): Credential | null | Promise<Credential | null>;
  /**
   * Records a key's last use. Callers need not await it: a missed stamp must fail nothing, so a caller that does not wait
   * catches the rejection and logs it. SQLite queues it for its next write batch and never makes it wait for a lock;
   * PostgreSQL writes it at once.
   */
  touchKey(keyId: string, usedAt: Date): Promise<void>;
}
