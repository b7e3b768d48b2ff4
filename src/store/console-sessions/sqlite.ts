// Console sessions in SQLite: plain functions over the engine's prepared statements (revoking an admin token calls one in its
// transaction), and the part that runs them. Times are ISO text, which compares in time order.
import { deleteInBatches } from '../pruning.ts';
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';
import { SQLITE_CONSTRAINT_FOREIGNKEY } from '../sqlite/sqlite-errors.ts';
import { adminTokenNotFound } from '../store-errors.ts';
import { CONSOLE_SESSION_COLUMNS, toConsoleSession } from './console-session-rows.ts';
import type { ConsoleSession, ConsoleSessionStore, NewConsoleSession } from './console-session-store.ts';

/** Fails with admin_token_not_found when no admin token has the session's token id. */
export function insertConsoleSession(statement: Prepare, session: NewConsoleSession): void {
  const at = session.createdAt.toISOString();
  try {
    statement('INSERT INTO console_sessions (session_hash, token_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)').run(
      session.hash,
      session.tokenId,
      at,
      at,
    );
  } catch (error) {
    if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_FOREIGNKEY) throw adminTokenNotFound(session.tokenId);
    throw error;
  }
}

export function selectConsoleSession(statement: Prepare, hash: Uint8Array): ConsoleSession | null {
  const row = statement(
    `SELECT ${CONSOLE_SESSION_COLUMNS} FROM console_sessions s LEFT JOIN admin_tokens t ON t.token_id = s.token_id WHERE s.session_hash = ?`,
  ).get(hash) as Row | undefined;
  return row === undefined ? null : toConsoleSession(row, SQLITE_VALUES);
}

/** Two touches racing leave the later time, whichever commits last. */
export function stampConsoleSessionSeen(statement: Prepare, hash: Uint8Array, seenAt: Date): void {
  statement('UPDATE console_sessions SET last_seen_at = max(last_seen_at, ?) WHERE session_hash = ?').run(seenAt.toISOString(), hash);
}

export function deleteConsoleSession(statement: Prepare, hash: Uint8Array): void {
  statement('DELETE FROM console_sessions WHERE session_hash = ?').run(hash);
}

/** Every session signed in with the token: called in the transaction that revokes it. */
export function deleteTokenConsoleSessions(statement: Prepare, tokenId: string): void {
  statement('DELETE FROM console_sessions WHERE token_id = ?').run(tokenId);
}

export class SqliteConsoleSessions implements ConsoleSessionStore {
  readonly #engine: SqliteEngine;

  constructor(engine: SqliteEngine) {
    this.#engine = engine;
  }

  createConsoleSession(session: NewConsoleSession): Promise<void> {
    return this.#engine.run(() => insertConsoleSession(this.#engine.statement, session));
  }

  findConsoleSession(hash: Uint8Array): Promise<ConsoleSession | null> {
    return this.#engine.run(() => selectConsoleSession(this.#engine.statement, hash));
  }

  touchConsoleSession(hash: Uint8Array, seenAt: Date): Promise<void> {
    return this.#engine.run(() => stampConsoleSessionSeen(this.#engine.statement, hash, seenAt));
  }

  endConsoleSession(hash: Uint8Array): Promise<void> {
    return this.#engine.run(() => deleteConsoleSession(this.#engine.statement, hash));
  }

  async pruneConsoleSessions(createdBefore: Date, seenBefore: Date): Promise<number> {
    const engine = this.#engine;
    const created = 'DELETE FROM console_sessions WHERE rowid IN (SELECT rowid FROM console_sessions WHERE created_at < ? LIMIT ?)';
    const seen = 'DELETE FROM console_sessions WHERE rowid IN (SELECT rowid FROM console_sessions WHERE last_seen_at < ? LIMIT ?)';
    let pruned = await deleteInBatches((limit) => engine.run(() => Number(engine.statement(created).run(createdBefore.toISOString(), limit).changes)));
    pruned += await deleteInBatches((limit) => engine.run(() => Number(engine.statement(seen).run(seenBefore.toISOString(), limit).changes)));
    return pruned;
  }
}
