// Pruning at size, on both engines: a million expired audit entries go in bounded batches that return nothing to Node, so the
// process's memory stays flat and (on SQLite, where a batch runs on the event loop) requests get turns in between.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';

/** PRUNE_ROWS=... for another size; a million by default, as the issue asks. */
const ROWS = Number(process.env.PRUNE_ROWS ?? 1_000_000);
/** What the process may grow by while pruning: returning every deleted row to Node (RETURNING 1) cost 235 MB at a million. */
const GROWTH_LIMIT_BYTES = 64 * 1024 * 1024;

interface Watched {
  readonly pruned: number;
  readonly peakGrowth: number;
  /** Turns the event loop took while the prune ran. */
  readonly turns: number;
}

/** Prunes everything before now, sampling resident memory at every turn of the event loop it gets meanwhile. */
async function watchPrune(store: Store): Promise<Watched> {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  let turns = 0;
  let running = true;
  const sample = () => {
    if (!running) return;
    turns++;
    peak = Math.max(peak, process.memoryUsage().rss);
    setImmediate(sample);
  };
  setImmediate(sample);
  const pruned = await store.pruneAudit(new Date());
  running = false;
  peak = Math.max(peak, process.memoryUsage().rss);
  return { pruned, peakGrowth: peak - before, turns };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

// Asked before any test runs: the SQLite prune below holds this process's event loop in long stretches on a busy machine, and a
// connection attempt made meanwhile would time out for that reason alone.
const postgresSkip = await postgresSkipReason();
describe_sqlite();
describe_postgres();

function describe_sqlite(): void {
  const { after, before, describe, test } = requiring(undefined);
  describe(`pruning ${ROWS.toLocaleString('en-US')} expired audit entries on SQLite`, () => {
    let dir: string;
    let store: Store;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'account-api-prune-'));
      const path = join(dir, 'prune.db');
      store = new SqliteStore({ path, environment: 'live', synchronous: 'normal', busyTimeoutMs: 60_000 });
      await store.migrate({ recordEnvironment: true });
      const db = new DatabaseSync(path);
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes)
         SELECT '2020-01-01T00:00:00.000Z', 'cli:test', 'account.updated', i, 'user' || i, '{"name":{"old":"a","new":"b"}}' FROM n`,
      ).run(ROWS);
      db.close();
    });
    after(async () => {
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('deletes them all in batches, with turns for requests in between and memory flat', async () => {
      const watched = await watchPrune(store);
      assert.equal(watched.pruned, ROWS);
      assert.equal((await store.listAudit({ limit: 10 })).length, 0, 'expired entries are left');
      // One DELETE of everything would hold the event loop (and the write lock) until done: no turn at all.
      assert.ok(watched.turns >= 10, `the event loop had ${watched.turns} turns while a million rows were deleted: not batched`);
      assert.ok(watched.peakGrowth < GROWTH_LIMIT_BYTES, `the process grew by ${mb(watched.peakGrowth)} while pruning`);
    });
  });
}

function describe_postgres(): void {
  const { after, before, describe, test } = requiring(postgresSkip);
  describe(`pruning ${ROWS.toLocaleString('en-US')} expired audit entries on PostgreSQL`, () => {
    let database: TestDatabase;
    let store: Store;
    before(async () => {
      database = await createTestDatabase();
      store = new PostgresStore({ url: database.url, environment: 'live', poolMax: 4, connectTimeoutMs: 10_000, statementTimeoutMs: 600_000 });
      await store.migrate({ recordEnvironment: true });
      await database.query(
        `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes)
         SELECT '2020-01-01T00:00:00Z', 'cli:test', 'account.updated', i, 'user' || i, '{"name":{"old":"a","new":"b"}}' FROM generate_series(1, $1::int) i`,
        [ROWS],
      );
    });
    after(async () => {
      await store?.close();
      await database?.drop();
    });

    test('deletes them all in batches that return no rows, memory flat', async () => {
      const watched = await watchPrune(store);
      assert.equal(watched.pruned, ROWS);
      assert.equal((await store.listAudit({ limit: 10 })).length, 0, 'expired entries are left');
      assert.ok(watched.peakGrowth < GROWTH_LIMIT_BYTES, `the process grew by ${mb(watched.peakGrowth)} while pruning`);
    });
  });
}
