// Usage per key in SQLite: each flush one transaction of upserts that add to the stored counts; read per key; pruned by day.
import { KEY_USAGE_ADDRESSES } from '../../domain/key-usage.ts';
import { deleteInBatches } from '../pruning.ts';
import type { Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { accountNotFound, keyNotFound } from '../store-errors.ts';
import type { KeyUsage, KeyUsageBatch, KeyUsageStore } from './key-usage-store.ts';
import { daysOf } from './usage-rows.ts';

// A key deleted since it was counted is skipped (WHERE EXISTS), so one gone key never fails the others' batch.
const ADD_COUNT = `INSERT INTO key_usage (key_id, day, outcome, count) SELECT ?1, ?2, ?3, ?4
  WHERE EXISTS (SELECT 1 FROM api_keys WHERE key_id = ?1)
  ON CONFLICT (key_id, day, outcome) DO UPDATE SET count = count + excluded.count`;
const SEEN_AT = `INSERT INTO key_usage_addresses (key_id, address, last_seen) SELECT ?1, ?2, ?3
  WHERE EXISTS (SELECT 1 FROM api_keys WHERE key_id = ?1)
  ON CONFLICT (key_id, address) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)`;
const KEEP_NEWEST = `DELETE FROM key_usage_addresses WHERE key_id = ?1 AND address NOT IN
  (SELECT address FROM key_usage_addresses WHERE key_id = ?1 ORDER BY last_seen DESC, address LIMIT ${KEY_USAGE_ADDRESSES})`;

export class SqliteKeyUsage implements KeyUsageStore {
  readonly #engine: SqliteEngine;

  constructor(engine: SqliteEngine) {
    this.#engine = engine;
  }

  recordKeyUsage(batch: KeyUsageBatch): Promise<void> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        for (const { keyId, day, outcome, count } of batch.counts) statement(ADD_COUNT).run(keyId, day, outcome, count);
        const keys = new Set<string>();
        for (const { keyId, address, lastSeen } of batch.addresses) {
          statement(SEEN_AT).run(keyId, address, lastSeen.toISOString());
          keys.add(keyId);
        }
        for (const keyId of keys) statement(KEEP_NEWEST).run(keyId);
      }),
    );
  }

  readKeyUsage(username: string, keyId: string, since: string): Promise<KeyUsage> {
    const statement = this.#engine.statement;
    return this.#engine.run(() => {
      const owner = statement('SELECT id FROM accounts WHERE username = ?').get(username);
      if (owner === undefined) throw accountNotFound(username);
      if (statement('SELECT 1 AS found FROM api_keys WHERE key_id = ? AND account_id = ?').get(keyId, Number(owner.id)) === undefined) {
        throw keyNotFound(keyId);
      }
      const rows = statement('SELECT day, outcome, count FROM key_usage WHERE key_id = ? AND day >= ? ORDER BY day').all(keyId, since) as Row[];
      const addresses = statement(
        `SELECT address, last_seen FROM key_usage_addresses WHERE key_id = ? ORDER BY last_seen DESC, address LIMIT ${KEY_USAGE_ADDRESSES}`,
      ).all(keyId) as Row[];
      return { days: daysOf(rows), addresses: addresses.map((row) => ({ address: String(row.address), lastSeen: String(row.last_seen) })) };
    });
  }

  async pruneKeyUsage(before: string): Promise<number> {
    const engine = this.#engine;
    const days = 'DELETE FROM key_usage WHERE rowid IN (SELECT rowid FROM key_usage WHERE day < ? LIMIT ?)';
    const addresses = 'DELETE FROM key_usage_addresses WHERE rowid IN (SELECT rowid FROM key_usage_addresses WHERE last_seen < ? LIMIT ?)';
    let pruned = await deleteInBatches((limit) => engine.run(() => Number(engine.statement(days).run(before, limit).changes)));
    pruned += await deleteInBatches((limit) => engine.run(() => Number(engine.statement(addresses).run(before, limit).changes)));
    return pruned;
  }
}
