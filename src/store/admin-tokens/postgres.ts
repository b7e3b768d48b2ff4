// Admin tokens in PostgreSQL: their rows as plain functions over a query handle (a pooled connection or the caller's
// transaction), and the store's part (PostgresAdminTokens), which writes each change and its audit entry in one transaction.
import { adminTokenCreated, adminTokenRevoked } from './admin-token-changes.ts';
import { auditChange, insertAudited } from '../audit/postgres.ts';
import type { AuditActor } from '../audit/audit-store.ts';
import { deleteTokenConsoleSessions } from '../console-sessions/postgres.ts';
import { brokenConstraint, UNIQUE_VIOLATION } from '../postgres/pg-errors.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import type { Query, Row } from '../postgres/query.ts';
import { iso, isoOrNull } from '../postgres/query.ts';
import { adminTokenExists, adminTokenNotFound } from '../store-errors.ts';
import type { AdminCredential, AdminTokenRecord, AdminTokenStore, NewAdminToken } from './admin-token-store.ts';
import { ADMIN_TOKEN_COLUMNS, toAdminToken } from './admin-token-rows.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';


/** A taken id fails with the primary key's unique violation; createAdminToken turns it into admin_token_exists. */
export async function insertAdminToken(query: Query, token: NewAdminToken): Promise<AdminTokenRecord> {
  const [row] = await query(
    `INSERT INTO admin_tokens (token_id, secret_hash, display_prefix, label, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, now()) RETURNING ${ADMIN_TOKEN_COLUMNS}`,
    [token.tokenId, Buffer.from(token.hash), token.displayPrefix, token.label, token.createdBy],
  );
  return toAdminToken(row!, POSTGRES_VALUES);
}

export async function selectAdminTokens(query: Query): Promise<AdminTokenRecord[]> {
  return (await query(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens ORDER BY created_at, token_id`)).map((row) => toAdminToken(row, POSTGRES_VALUES));
}

/** Locked for the rest of the caller's transaction: two revocations at once record one entry, the second finds it revoked. */
export async function lockAdminToken(query: Query, tokenId: string): Promise<AdminTokenRecord | null> {
  const [row] = await query(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens WHERE token_id = $1 FOR UPDATE`, [tokenId]);
  return row === undefined ? null : toAdminToken(row, POSTGRES_VALUES);
}

export async function markAdminTokenRevoked(query: Query, tokenId: string): Promise<AdminTokenRecord> {
  const [row] = await query(`UPDATE admin_tokens SET revoked_at = now() WHERE token_id = $1 RETURNING ${ADMIN_TOKEN_COLUMNS}`, [tokenId]);
  return toAdminToken(row!, POSTGRES_VALUES);
}

export async function selectAdminCredential(query: Query, tokenId: string): Promise<AdminCredential | null> {
  const [row] = await query('SELECT token_id, secret_hash, revoked_at FROM admin_tokens WHERE token_id = $1', [tokenId]);
  if (row === undefined) return null;
  return { tokenId: String(row.token_id), hash: row.secret_hash as Buffer, revoked: row.revoked_at !== null };
}

export async function stampAdminTokenUse(query: Query, tokenId: string, usedAt: Date): Promise<void> {
  await query('UPDATE admin_tokens SET last_used_at = $2 WHERE token_id = $1', [tokenId, usedAt]);
}

export class PostgresAdminTokens extends PostgresPart implements AdminTokenStore {
  async createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord> {
    try {
      return await insertAudited(this.engine, audit, (query) => insertAdminToken(query, token), adminTokenCreated);
    } catch (error) {
      const broken = brokenConstraint(error);
      if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'admin_tokens_pkey') throw adminTokenExists(token.tokenId);
      throw error;
    }
  }

  async listAdminTokens(): Promise<AdminTokenRecord[]> {
    return selectAdminTokens(this.engine.query);
  }

  async revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord> {
    return this.engine.transaction(async (query) => {
      const before = await lockAdminToken(query, tokenId);
      if (before === null) throw adminTokenNotFound(tokenId);
      if (before.revokedAt !== null) return before;
      const revoked = await markAdminTokenRevoked(query, tokenId);
      // Its console sessions are refused from now on anyway (the join in findConsoleSession); deleting them keeps the table clean.
      await deleteTokenConsoleSessions(query, tokenId);
      await auditChange(query, audit, adminTokenRevoked(revoked));
      return revoked;
    });
  }

  async findAdminToken(tokenId: string): Promise<AdminCredential | null> {
    return selectAdminCredential(this.engine.query, tokenId);
  }

  async touchAdminToken(tokenId: string, usedAt: Date): Promise<void> {
    await stampAdminTokenUse(this.engine.query, tokenId, usedAt);
  }
}
