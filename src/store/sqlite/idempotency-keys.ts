// The idempotency_keys table in SQLite: claiming, completing, releasing and pruning keys, each run by SqliteStore in its own way.
import type { StatementSync } from 'node:sqlite';
import type { HeldIdempotencyKey, IdempotencyClaimOutcome, IdempotencyKeyClaim, StoredAnswer } from '../store.ts';

/** SqliteStore's cache of prepared statements. */
export type Statements = (sql: string) => StatementSync;

type Row = Record<string, unknown>;

const HELD = 'account_id = ? AND key = ? AND token = ? AND status IS NULL';

/**
 * Run inside a write transaction (BEGIN IMMEDIATE), so no other connection can claim between the read and the write.
 * Times are this process's clock in milliseconds; every SQLite writer shares the machine, and so its clock.
 */
export function claimKey(statement: Statements, claim: IdempotencyKeyClaim, now: number): IdempotencyClaimOutcome {
  const row = statement(
    'SELECT fingerprint, locked_until, expires_at, status, headers, body FROM idempotency_keys WHERE account_id = ? AND key = ?',
  ).get(claim.accountId, claim.key) as Row | undefined;
  const free = row === undefined || Number(row.expires_at) <= now || (row.status === null && Number(row.locked_until) <= now);
  if (free) {
    statement(
      `INSERT OR REPLACE INTO idempotency_keys (account_id, key, fingerprint, token, locked_until, expires_at, status, headers, body)
       VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`,
    ).run(claim.accountId, claim.key, claim.fingerprint, claim.token, now + claim.leaseMs, now + claim.ttlMs);
    return { state: 'claimed' };
  }
  const fingerprint = String(row.fingerprint);
  if (row.status === null) return { state: 'in_progress', fingerprint };
  return { state: 'completed', fingerprint, answer: toAnswer(row) };
}

function toAnswer(row: Row): StoredAnswer {
  return { status: Number(row.status), headers: JSON.parse(String(row.headers)) as Record<string, string>, body: row.body as Uint8Array };
}

export function holdsKey(statement: Statements, held: HeldIdempotencyKey): boolean {
  return statement(`SELECT 1 AS held FROM idempotency_keys WHERE ${HELD}`).get(held.accountId, held.key, held.token) !== undefined;
}

export function completeKey(statement: Statements, held: HeldIdempotencyKey, answer: StoredAnswer): boolean {
  const result = statement(`UPDATE idempotency_keys SET status = ?, headers = ?, body = ? WHERE ${HELD}`).run(
    answer.status,
    JSON.stringify(answer.headers),
    answer.body,
    held.accountId,
    held.key,
    held.token,
  );
  return result.changes > 0;
}

export function releaseKey(statement: Statements, held: HeldIdempotencyKey): void {
  statement(`DELETE FROM idempotency_keys WHERE ${HELD}`).run(held.accountId, held.key, held.token);
}

export function pruneKeys(statement: Statements, now: number): number {
  return Number(statement('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(now).changes);
}
