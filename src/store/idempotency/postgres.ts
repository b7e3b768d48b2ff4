// The idempotency key tables in PostgreSQL: claiming, completing, releasing and pruning keys, one statement each but the claim;
// as functions an account update calls in its own transaction, and as the store's part (PostgresIdempotency).
import { KEYSPACE_TABLES, keyspaceOf } from './keyspaces.ts';
import { PostgresPart, type PostgresEngine } from '../postgres/postgres-engine.ts';
import { brokenConstraint, FOREIGN_KEY_VIOLATION } from '../postgres/pg-errors.ts';
import type { Query } from '../postgres/query.ts';
import { accountGone } from '../store-errors.ts';
import type { HeldIdempotencyKey, IdempotencyClaimOutcome, IdempotencyKeyClaim, IdempotencyStore, StoredAnswer } from '../store.ts';
import { deleteInBatches } from '../pruning.ts';

/** The held key's row: its owner's table, its owner, its key, and still this holder's (token) and unanswered ($1 to $3). */
function heldRow(held: HeldIdempotencyKey): { table: string; where: string; values: [number | string, string, string] } {
  const { table, ownerColumn, owner } = keyspaceOf(held);
  return { table, where: `${ownerColumn} = $1 AND key = $2 AND token = $3 AND status IS NULL`, values: [owner, held.key, held.token] };
}

/**
 * Inserts the claim, or takes over a key that is free again (kept past its time to live, or held past its lease), in one
 * statement: the row lock makes exactly one of two concurrent claims win. When nothing was claimed the row is read; should it
 * have been released or pruned in between, the claim is tried again.
 */
export async function claimKey(query: Query, claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
  const { table, ownerColumn, owner } = keyspaceOf(claim);
  for (;;) {
    const claimed = await query(
      `INSERT INTO ${table} AS held (${ownerColumn}, key, fingerprint, token, locked_until, expires_at)
       VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', now() + $6 * interval '1 millisecond')
       ON CONFLICT (${ownerColumn}, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token, locked_until = EXCLUDED.locked_until,
             expires_at = EXCLUDED.expires_at, status = NULL, headers = NULL, body = NULL
         WHERE held.expires_at <= now() OR (held.status IS NULL AND held.locked_until <= now())
       RETURNING token`,
      [owner, claim.key, claim.fingerprint, claim.token, claim.leaseMs, claim.ttlMs],
    );
    if (claimed.length > 0) return { state: 'claimed' };
    const [row] = await query(`SELECT fingerprint, status, headers, body FROM ${table} WHERE ${ownerColumn} = $1 AND key = $2`, [owner, claim.key]);
    if (row === undefined) continue;
    const fingerprint = String(row.fingerprint);
    if (row.status === null) return { state: 'in_progress', fingerprint };
    return {
      state: 'completed',
      fingerprint,
      answer: { status: Number(row.status), headers: row.headers as Record<string, string>, body: row.body as Buffer },
    };
  }
}

/** Locks the held row until the transaction ends, so the answer recorded with the update is this holder's. */
export async function lockHeldKey(query: Query, held: HeldIdempotencyKey): Promise<boolean> {
  const { table, where, values } = heldRow(held);
  return (await query(`SELECT 1 FROM ${table} WHERE ${where} FOR UPDATE`, values)).length > 0;
}

export async function completeKey(query: Query, held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean> {
  const { table, where, values } = heldRow(held);
  const rows = await query(`UPDATE ${table} SET status = $4, headers = $5::jsonb, body = $6 WHERE ${where} RETURNING 1`, [
    ...values,
    answer.status,
    JSON.stringify(answer.headers),
    Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength),
  ]);
  return rows.length > 0;
}

export async function releaseKey(query: Query, held: HeldIdempotencyKey): Promise<void> {
  const { table, where, values } = heldRow(held);
  await query(`DELETE FROM ${table} WHERE ${where}`, values);
}

/** Both tables: a key of either kind is deleted once kept past its time to live, in bounded batches (pruning.ts). */
export async function pruneKeys(engine: PostgresEngine): Promise<number> {
  let pruned = 0;
  for (const table of KEYSPACE_TABLES) {
    const batch = `DELETE FROM ${table} WHERE ctid = ANY (ARRAY (SELECT ctid FROM ${table} WHERE expires_at <= now() LIMIT $1))`;
    pruned += await deleteInBatches((limit) => engine.rowCount(batch, [limit]));
  }
  return pruned;
}

export class PostgresIdempotency extends PostgresPart implements IdempotencyStore {
  async claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
    try {
      return await claimKey(this.engine.query, claim);
    } catch (error) {
      // The account was deleted while its own request ran (an admin token is never deleted, only revoked).
      if (brokenConstraint(error)?.state === FOREIGN_KEY_VIOLATION && claim.accountId !== undefined) throw accountGone();
      throw error;
    }
  }

  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean> {
    return completeKey(this.engine.query, held, answer);
  }

  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void> {
    return releaseKey(this.engine.query, held);
  }

  pruneIdempotencyKeys(): Promise<number> {
    return pruneKeys(this.engine);
  }
}
