// Admin tokens' rows in SQLite: plain functions over the engine's prepared statements, and the part that runs them in its
// transactions with their audit entries.
import { adminTokenCreated, adminTokenRevoked } from './admin-token-changes.ts';
import type { AuditActor } from '../audit/audit-store.ts';
import { auditChange } from '../audit/sqlite.ts';
import { deleteTokenConsoleSessions } from '../console-sessions/sqlite.ts';
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { SQLITE_CONSTRAINT_PRIMARYKEY } from '../sqlite/sqlite-errors.ts';
import { adminTokenExists, adminTokenNotFound } from '../store-errors.ts';
import type { AdminCredential, AdminTokenRecord, AdminTokenStore, NewAdminToken } from './admin-token-store.ts';
import { ADMIN_TOKEN_COLUMNS, toAdminToken } from './admin-token-rows.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';


/** Fails with admin_token_exists when the id is taken. */
export function insertAdminToken(statement: Prepare, token: NewAdminToken, createdAt: string): AdminTokenRecord {
  try {
    const row = statement(
      `INSERT INTO admin_tokens (token_id, secret_hash, display_prefix, label, created_by, created_at)
       VALUES (?, ?, ?, ?, ?, ?) RETURNING ${ADMIN_TOKEN_COLUMNS}`,
    ).get(token.tokenId, token.hash, token.displayPrefix, token.label, token.createdBy, createdAt);
    return toAdminToken(row as Row, SQLITE_VALUES);
  } catch (error) {
    if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_PRIMARYKEY) throw adminTokenExists(token.tokenId);
    throw error;
  }
}

export function selectAdminTokens(statement: Prepare): AdminTokenRecord[] {
  return statement(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens ORDER BY created_at, token_id`)
    .all()
    .map((row) => toAdminToken(row as Row, SQLITE_VALUES));
}

export function selectAdminToken(statement: Prepare, tokenId: string): AdminTokenRecord | null {
  const row = statement(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens WHERE token_id = ?`).get(tokenId);
  return row === undefined ? null : toAdminToken(row as Row, SQLITE_VALUES);
}

export function markAdminTokenRevoked(statement: Prepare, tokenId: string, revokedAt: string): AdminTokenRecord {
  return toAdminToken(statement(`UPDATE admin_tokens SET revoked_at = ? WHERE token_id = ? RETURNING ${ADMIN_TOKEN_COLUMNS}`).get(revokedAt, tokenId) as Row, SQLITE_VALUES);
}

/** What the admin port's authentication needs; never cached: a revocation by the CLI must hold from the next request. */
export function selectAdminCredential(statement: Prepare, tokenId: string): AdminCredential | null {
  const row = statement('SELECT token_id, secret_hash, revoked_at FROM admin_tokens WHERE token_id = ?').get(tokenId) as Row | undefined;
  if (row === undefined) return null;
  return { tokenId: String(row.token_id), hash: row.secret_hash as Uint8Array, revoked: row.revoked_at !== null };
}

export function stampAdminTokenUse(statement: Prepare, tokenId: string, usedAt: Date): void {
  statement('UPDATE admin_tokens SET last_used_at = ? WHERE token_id = ?').run(usedAt.toISOString(), tokenId);
}

export class SqliteAdminTokens implements AdminTokenStore {
  readonly #engine: SqliteEngine;

  constructor(engine: SqliteEngine) {
    this.#engine = engine;
  }

  createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        const created = insertAdminToken(statement, token, new Date().toISOString());
        auditChange(statement, audit, adminTokenCreated(created));
        return created;
      }),
    );
  }

  listAdminTokens(): Promise<AdminTokenRecord[]> {
    return this.#engine.run(() => selectAdminTokens(this.#engine.statement));
  }

  revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        const before = selectAdminToken(statement, tokenId);
        if (before === null) throw adminTokenNotFound(tokenId);
        if (before.revokedAt !== null) return before;
        const revoked = markAdminTokenRevoked(statement, tokenId, new Date().toISOString());
        // Its console sessions are refused from now on anyway (the join in findConsoleSession); deleting them keeps the table clean.
        deleteTokenConsoleSessions(statement, tokenId);
        auditChange(statement, audit, adminTokenRevoked(revoked));
        return revoked;
      }),
    );
  }

  findAdminToken(tokenId: string): Promise<AdminCredential | null> {
    return this.#engine.run(() => selectAdminCredential(this.#engine.statement, tokenId));
  }

  touchAdminToken(tokenId: string, usedAt: Date): Promise<void> {
    return this.#engine.run(() => stampAdminTokenUse(this.#engine.statement, tokenId, usedAt));
  }
}
