// API keys as the store keeps them: issued, rolled, listed and revoked, only their hash at rest; no SQL here.
import type { AuditActor } from '../audit/audit-store.ts';
import type { ApiKeyRecord, KeyScope } from '../../domain/accounts.ts';

export type { ApiKeyRecord, KeyScope } from '../../domain/accounts.ts';

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

/** A key rolled into its successor: both as they now are. */
export interface RolledKey {
  readonly old: ApiKeyRecord;
  readonly successor: ApiKeyRecord;
}

/** How many keys an account may have that are neither expired nor revoked. */
export const MAX_ACTIVE_KEYS = 20;

export interface KeyStore {
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
}
