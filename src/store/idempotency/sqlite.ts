// The idempotency key tables in SQLite: claiming, completing, releasing and pruning keys; holdsKey and completeKey also run
// inside an account update's transaction (accounts/sqlite.ts).
import { KEYSPACE_TABLES, keyspaceOf } from './keyspaces.ts';
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { SQLITE_CONSTRAINT_FOREIGNKEY } from '../sqlite/sqlite-errors.ts';
import { accountGone } from '../store-errors.ts';
import type { HeldIdempotencyKey, IdempotencyClaimOutcome, IdempotencyKeyClaim, IdempotencyStore, StoredAnswer } from './idempotency-store.ts';
import { deleteInBatches } from '../pruning.ts';

/** The held key's row: its owner's table, its owner, its key, and still this holder's (token) and unanswered. */
function heldRow(held: HeldIdempotencyKey): { table: string; where: string; values: [number | string, string, string] } {
  const { table, ownerColumn, owner } = keyspaceOf(held);
  return { table, where: `${ownerColumn} = ? AND key = ? AND token = ? AND status IS NULL`, values: [owner, held.key, held.token] };
}

/**
 * Run inside a write transaction (BEGIN IMMEDIATE), so no other connection can claim between the read and the write.
 * Times are this process's clock in milliseconds; every SQLite writer shares the machine, and so its clock.
 */
export function claimKey(statement: Prepare, claim: IdempotencyKeyClaim, now: number): IdempotencyClaimOutcome {
  const { table, ownerColumn, owner } = keyspaceOf(claim);
  const row = statement(
    `SELECT fingerprint, locked_until, expires_at, status, headers, body FROM ${table} WHERE ${ownerColumn} = ? AND key = ?`,
  ).get(owner, claim.key) as Row | undefined;
  const free = row === undefined || Number(row.expires_at) <= now || (row.status === null && Number(row.locked_until) <= now);
  if (free) {
    statement(
      `INSERT OR REPLACE INTO ${table} (${ownerColumn}, key, fingerprint, token, locked_until, expires_at, status, headers, body)
       VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`,
    ).run(owner, claim.key, claim.fingerprint, claim.token, now + claim.leaseMs, now + claim.ttlMs);
    return { state: 'claimed' };
  }
  const fingerprint = String(row.fingerprint);
  if (row.status === null) return { state: 'in_progress', fingerprint };
  return { state: 'completed', fingerprint, answer: toAnswer(row) };
}

function toAnswer(row: Row): StoredAnswer {
  return { status: Number(row.status), headers: JSON.parse(String(row.headers)) as Record<string, string>, body: row.body as Uint8Array };
}

export function holdsKey(statement: Prepare, held: HeldIdempotencyKey): boolean {
  const { table, where, values } = heldRow(held);
  return statement(`SELECT 1 AS held FROM ${table} WHERE ${where}`).get(...values) !== undefined;
}

export function completeKey(statement: Prepare, held: HeldIdempotencyKey, answer: StoredAnswer): boolean {
  const { table, where, values } = heldRow(held);
  const result = statement(`UPDATE ${table} SET status = ?, headers = ?, body = ? WHERE ${where}`).run(
    answer.status,
    JSON.stringify(answer.headers),
    answer.body,
    ...values,
  );
  return result.changes > 0;
}

export function releaseKey(statement: Prepare, held: HeldIdempotencyKey): void {
  const { table, where, values } = heldRow(held);
  statement(`DELETE FROM ${table} WHERE ${where}`).run(...values);
}

/** Both tables: a key of either kind is deleted once kept past its time to live, in bounded batches (pruning.ts). */
export async function pruneKeys(engine: SqliteEngine, now: number): Promise<number> {
  let pruned = 0;
  for (const table of KEYSPACE_TABLES) {
    const batch = `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)`;
    pruned += await deleteInBatches((limit) => engine.run(() => Number(engine.statement(batch).run(now, limit).changes)));
  }
  return pruned;
}

export class SqliteIdempotency implements IdempotencyStore {
  readonly #engine: SqliteEngine;

  constructor(engine: SqliteEngine) {
    this.#engine = engine;
  }

  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
    return this.#engine.run(() => {
      try {
        return this.#engine.transaction(() => claimKey(this.#engine.statement, claim, Date.now()));
      } catch (error) {
        // The account was deleted while its own request ran (an admin token is never deleted, only revoked).
        if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_FOREIGNKEY && claim.accountId !== undefined) throw accountGone();
        throw error;
      }
    });
  }

  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean> {
    return this.#engine.run(() => completeKey(this.#engine.statement, held, answer));
  }

  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void> {
    return this.#engine.run(() => releaseKey(this.#engine.statement, held));
  }

  pruneIdempotencyKeys(): Promise<number> {
    return pruneKeys(this.#engine, Date.now());
  }
}
