// Admin tokens' rows in PostgreSQL: plain functions over a query handle, a pooled connection or the caller's transaction (the
// store keeps the transaction and the audit entry; these keep the SQL).
import type { Query, Row } from '../postgres/query.ts';
import { iso, isoOrNull } from '../postgres/query.ts';
import type { AdminCredential, AdminTokenRecord, NewAdminToken } from './admin-token-store.ts';

const COLUMNS = 'token_id, label, display_prefix, created_by, created_at, last_used_at, revoked_at';

function toAdminToken(row: Row): AdminTokenRecord {
  return {
    tokenId: String(row.token_id),
    label: String(row.label),
    displayPrefix: String(row.display_prefix),
    createdBy: String(row.created_by),
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

/** A taken id fails with the primary key's unique violation; the store turns it into admin_token_exists. */
export async function insertAdminToken(query: Query, token: NewAdminToken): Promise<AdminTokenRecord> {
  const [row] = await query(
    `INSERT INTO admin_tokens (token_id, secret_hash, display_prefix, label, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, now()) RETURNING ${COLUMNS}`,
    [token.tokenId, Buffer.from(token.hash), token.displayPrefix, token.label, token.createdBy],
  );
  return toAdminToken(row!);
}

export async function selectAdminTokens(query: Query): Promise<AdminTokenRecord[]> {
  return (await query(`SELECT ${COLUMNS} FROM admin_tokens ORDER BY created_at, token_id`)).map(toAdminToken);
}

/** Locked for the rest of the caller's transaction: two revocations at once record one entry, the second finds it revoked. */
export async function lockAdminToken(query: Query, tokenId: string): Promise<AdminTokenRecord | null> {
  const [row] = await query(`SELECT ${COLUMNS} FROM admin_tokens WHERE token_id = $1 FOR UPDATE`, [tokenId]);
  return row === undefined ? null : toAdminToken(row);
}

export async function markAdminTokenRevoked(query: Query, tokenId: string): Promise<AdminTokenRecord> {
  const [row] = await query(`UPDATE admin_tokens SET revoked_at = now() WHERE token_id = $1 RETURNING ${COLUMNS}`, [tokenId]);
  return toAdminToken(row!);
}

export async function selectAdminCredential(query: Query, tokenId: string): Promise<AdminCredential | null> {
  const [row] = await query('SELECT token_id, secret_hash, revoked_at FROM admin_tokens WHERE token_id = $1', [tokenId]);
  if (row === undefined) return null;
  return { tokenId: String(row.token_id), hash: row.secret_hash as Buffer, revoked: row.revoked_at !== null };
}

export async function stampAdminTokenUse(query: Query, tokenId: string, usedAt: Date): Promise<void> {
  await query('UPDATE admin_tokens SET last_used_at = $2 WHERE token_id = $1', [tokenId, usedAt]);
}
