// Usage per key in PostgreSQL: each flush one transaction whose upserts add to the stored counts, so instances add up; read
// per key; pruned by day in bounded batches.
import { KEY_USAGE_ADDRESSES } from '../../domain/key-usage.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import { iso } from '../postgres/query.ts';
import { deleteInBatches } from '../pruning.ts';
import { accountNotFound, keyNotFound } from '../store-errors.ts';
import type { KeyUsage, KeyUsageBatch, KeyUsageStore } from './key-usage-store.ts';
import { daysOf } from './usage-rows.ts';

// Rows in key order, so two instances flushing the same keys lock them in the same order and never deadlock. A key deleted
// since it was counted is skipped (the join), so one gone key never fails the others' batch.
const ADD_COUNTS = `INSERT INTO key_usage AS stored (key_id, day, outcome, count)
  SELECT u.key_id, u.day, u.outcome, u.count
  FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[]) AS u (key_id, day, outcome, count)
  JOIN api_keys k ON k.key_id = u.key_id
  ORDER BY u.key_id, u.day, u.outcome
  ON CONFLICT (key_id, day, outcome) DO UPDATE SET count = stored.count + EXCLUDED.count`;
const SEEN_AT = `INSERT INTO key_usage_addresses AS stored (key_id, address, last_seen)
  SELECT u.key_id, u.address, u.last_seen
  FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u (key_id, address, last_seen)
  JOIN api_keys k ON k.key_id = u.key_id
  ORDER BY u.key_id, u.address
  ON CONFLICT (key_id, address) DO UPDATE SET last_seen = greatest(stored.last_seen, EXCLUDED.last_seen)`;
const KEEP_NEWEST = `DELETE FROM key_usage_addresses a WHERE a.key_id = ANY ($1::text[]) AND a.address NOT IN
  (SELECT b.address FROM key_usage_addresses b WHERE b.key_id = a.key_id ORDER BY b.last_seen DESC, b.address LIMIT ${KEY_USAGE_ADDRESSES})`;

function inOrderOf<T>(rows: readonly T[], sortKey: (row: T) => string): T[] {
  return rows.map((row) => ({ row, key: sortKey(row) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(({ row }) => row);
}

export class PostgresKeyUsage extends PostgresPart implements KeyUsageStore {
  async recordKeyUsage(batch: KeyUsageBatch): Promise<void> {
    const counts = inOrderOf(batch.counts, (row) => `${row.keyId}\u0000${row.day}\u0000${row.outcome}`);
    const addresses = inOrderOf(batch.addresses, (row) => `${row.keyId}\u0000${row.address}`);
    if (counts.length === 0 && addresses.length === 0) return;
    await this.engine.transaction(async (query) => {
      if (counts.length > 0) {
        await query(ADD_COUNTS, [counts.map((row) => row.keyId), counts.map((row) => row.day), counts.map((row) => row.outcome), counts.map((row) => row.count)]);
      }
      if (addresses.length > 0) {
        await query(SEEN_AT, [addresses.map((row) => row.keyId), addresses.map((row) => row.address), addresses.map((row) => row.lastSeen.toISOString())]);
        await query(KEEP_NEWEST, [[...new Set(addresses.map((row) => row.keyId))]]);
      }
    });
  }

  async readKeyUsage(username: string, keyId: string, since: string): Promise<KeyUsage> {
    const [owner] = await this.engine.query('SELECT id FROM accounts WHERE lower(username) = lower($1)', [username]);
    if (owner === undefined) throw accountNotFound(username);
    const [key] = await this.engine.query('SELECT 1 AS found FROM api_keys WHERE key_id = $1 AND account_id = $2', [keyId, owner.id]);
    if (key === undefined) throw keyNotFound(keyId);
    const rows = await this.engine.query(
      'SELECT day::text AS day, outcome, count FROM key_usage WHERE key_id = $1 AND day >= $2::date ORDER BY day',
      [keyId, since],
    );
    const addresses = await this.engine.query(
      `SELECT address, last_seen FROM key_usage_addresses WHERE key_id = $1 ORDER BY last_seen DESC, address LIMIT ${KEY_USAGE_ADDRESSES}`,
      [keyId],
    );
    return { days: daysOf(rows), addresses: addresses.map((row) => ({ address: String(row.address), lastSeen: iso(row.last_seen) })) };
  }

  async pruneKeyUsage(before: string): Promise<number> {
    const days = 'DELETE FROM key_usage WHERE ctid = ANY (ARRAY (SELECT ctid FROM key_usage WHERE day < $1::date LIMIT $2))';
    const addresses =
      'DELETE FROM key_usage_addresses WHERE ctid = ANY (ARRAY (SELECT ctid FROM key_usage_addresses WHERE last_seen < $1::timestamptz LIMIT $2))';
    let pruned = await deleteInBatches((limit) => this.engine.rowCount(days, [before, limit]));
    pruned += await deleteInBatches((limit) => this.engine.rowCount(addresses, [`${before}T00:00:00Z`, limit]));
    return pruned;
  }
}
