// Console sessions in PostgreSQL: plain functions over a query handle (a pooled connection, or the transaction that revokes
// an admin token), and the store's part; every call is one statement, so nothing rests on a session behind a pooler.
import { brokenConstraint, FOREIGN_KEY_VIOLATION } from '../postgres/pg-errors.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import { POSTGRES_VALUES, type Query } from '../postgres/query.ts';
import { deleteInBatches } from '../pruning.ts';
import { adminTokenNotFound } from '../store-errors.ts';
import { CONSOLE_SESSION_COLUMNS, toConsoleSession } from './console-session-rows.ts';
import type { ConsoleSession, ConsoleSessionStore, NewConsoleSession } from './console-session-store.ts';

/** Fails with admin_token_not_found when no admin token has the session's token id. */
export async function insertConsoleSession(query: Query, session: NewConsoleSession): Promise<void> {
  try {
    await query(
      'INSERT INTO console_sessions (session_hash, token_id, created_at, last_seen_at) VALUES ($1, $2, $3::timestamptz, $3::timestamptz)',
      [Buffer.from(session.hash), session.tokenId, session.createdAt.toISOString()],
    );
  } catch (error) {
    if (brokenConstraint(error)?.state === FOREIGN_KEY_VIOLATION) throw adminTokenNotFound(session.tokenId);
    throw error;
  }
}

export async function selectConsoleSession(query: Query, hash: Uint8Array): Promise<ConsoleSession | null> {
  const [row] = await query(
    `SELECT ${CONSOLE_SESSION_COLUMNS} FROM console_sessions s LEFT JOIN admin_tokens t ON t.token_id = s.token_id WHERE s.session_hash = $1`,
    [Buffer.from(hash)],
  );
  return row === undefined ? null : toConsoleSession(row, POSTGRES_VALUES);
}

/** Two touches racing leave the later time, whichever commits last. */
export async function stampConsoleSessionSeen(query: Query, hash: Uint8Array, seenAt: Date): Promise<void> {
  await query('UPDATE console_sessions SET last_seen_at = greatest(last_seen_at, $2::timestamptz) WHERE session_hash = $1', [
    Buffer.from(hash),
    seenAt.toISOString(),
  ]);
}

export async function deleteConsoleSession(query: Query, hash: Uint8Array): Promise<void> {
  await query('DELETE FROM console_sessions WHERE session_hash = $1', [Buffer.from(hash)]);
}

/** Every session signed in with the token: called in the transaction that revokes it. */
export async function deleteTokenConsoleSessions(query: Query, tokenId: string): Promise<void> {
  await query('DELETE FROM console_sessions WHERE token_id = $1', [tokenId]);
}

export class PostgresConsoleSessions extends PostgresPart implements ConsoleSessionStore {
  async createConsoleSession(session: NewConsoleSession): Promise<void> {
    await insertConsoleSession(this.engine.query, session);
  }

  async findConsoleSession(hash: Uint8Array): Promise<ConsoleSession | null> {
    return selectConsoleSession(this.engine.query, hash);
  }

  async touchConsoleSession(hash: Uint8Array, seenAt: Date): Promise<void> {
    await stampConsoleSessionSeen(this.engine.query, hash, seenAt);
  }

  async endConsoleSession(hash: Uint8Array): Promise<void> {
    await deleteConsoleSession(this.engine.query, hash);
  }

  async pruneConsoleSessions(createdBefore: Date, seenBefore: Date): Promise<number> {
    const created =
      'DELETE FROM console_sessions WHERE ctid = ANY (ARRAY (SELECT ctid FROM console_sessions WHERE created_at < $1::timestamptz LIMIT $2))';
    const seen =
      'DELETE FROM console_sessions WHERE ctid = ANY (ARRAY (SELECT ctid FROM console_sessions WHERE last_seen_at < $1::timestamptz LIMIT $2))';
    let pruned = await deleteInBatches((limit) => this.engine.rowCount(created, [createdBefore.toISOString(), limit]));
    pruned += await deleteInBatches((limit) => this.engine.rowCount(seen, [seenBefore.toISOString(), limit]));
    return pruned;
  }
}
