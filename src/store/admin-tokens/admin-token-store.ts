// Admin tokens as the store keeps them: made, listed, revoked and found for the admin port's authentication; no SQL here.
import type { AuditActor } from '../audit/audit-store.ts';

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

export interface AdminTokenStore {
  /** With `audit`, admin_token.created is written in the same transaction. */
  createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord>;
  /** Every admin token, revoked ones too, oldest first. */
  listAdminTokens(): Promise<AdminTokenRecord[]>;
  /** Fails with admin_token_not_found; revoking twice keeps the first time. */
  revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord>;
  findAdminToken(tokenId: string): Promise<AdminCredential | null>;
  /** An admin token's last use; like touchKey, callers need not await it. */
  touchAdminToken(tokenId: string, usedAt: Date): Promise<void>;
}
