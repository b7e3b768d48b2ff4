// Retention by time partitions on PostgreSQL: days made ahead, an expired day dropped while writes go on with nothing inside
// retention lost, reads by time range planned on the days they need, and an unpartitioned database with rows migrated whole.
import assert from 'node:assert/strict';
import pg from 'pg';

import {
  DAYS_AHEAD,
  PARTITIONED_TABLES,
  dayOf,
  dayPartitionName,
  listPartitions,
  maintainTimePartitions,
  type PartitionedTable,
} from '../../src/store/audit/time-partitions.ts';
import { auditListStatement } from '../../src/store/audit/postgres.ts';
import { applyMigrations, loadPostgresMigrations } from '../../src/store/postgres/migrate.ts';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';

const skip = await postgresSkipReason();
const { describe, test } = requiring(skip);

const DAY_MS = 86_400_000;
const plusDays = (day: Date, days: number) => new Date(day.getTime() + days * DAY_MS);
const CLI = { actor: 'cli:operator', requestId: null, address: null };

interface Fixture {
  readonly database: TestDatabase;
  readonly store: PostgresStore;
  readonly engine: PostgresEngine;
}

async function fixture(t: { after(fn: () => Promise<void>): void }): Promise<Fixture> {
  const database = await createTestDatabase();
  const connection = { url: database.url, poolMax: 6, connectTimeoutMs: 10_000, statementTimeoutMs: 60_000 };
  const store = new PostgresStore({ ...connection, environment: 'live' });
  const engine = new PostgresEngine(connection);
  t.after(async () => {
    await store.close();
    await engine.close();
    await database.drop();
  });
  return { database, store, engine };
}

/** The day the old table's partition ends: every row before it is there. */
async function cutoverOf(engine: PostgresEngine, table: PartitionedTable = 'audit_events'): Promise<Date> {
  const until = (await listPartitions(engine.query, table)).find((p) => p.of.kind === 'until');
  assert.ok(until !== undefined && until.of.kind === 'until', `${table} has no partition for the rows before the cutover`);
  return until.of.until;
}

async function count(database: TestDatabase, sql: string, values: unknown[] = []): Promise<number> {
  return Number((await database.query(`SELECT count(*)::int AS n FROM ${sql}`, values)).rows[0]?.n);
}

/** `rows` audit entries on `day`, spread over it, written straight to the partitioned table as the store's INSERT is. */
async function auditRowsOn(database: TestDatabase, day: Date, rows: number): Promise<void> {
  await database.query(
    `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes)
     SELECT $1::timestamptz + (i * 1000) * interval '1 millisecond', 'cli:seed', 'account.updated', i, 'user' || i, '{}'
     FROM generate_series(1, $2::int) i`,
    [day, rows],
  );
}

/** An event, its delivery and an attempt, at `at`. */
async function webhookRowsAt(database: TestDatabase, at: Date, eventId: string): Promise<void> {
  await database.query(`INSERT INTO webhook_events (event_id, type, created_at, payload) VALUES ($1, 'account.created', $2, '{}')`, [eventId, at]);
  const [delivery] = (
    await database.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, created_at) VALUES ($1, 'we_test', 'succeeded', $2, $2)
       RETURNING delivery_id`,
      [eventId, at],
    )
  ).rows;
  await database.query(
    `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms) VALUES ($1, 'we_test', $2, $3, 200, 5)`,
    [delivery!.delivery_id, eventId, at],
  );
}

describe('PostgreSQL time partitions', () => {
  test('a migrated database has each table partitioned by day: the old table before the cutover, the days ahead, and DEFAULT', async (t) => {
    const { database, store, engine } = await fixture(t);
    await store.migrate({ recordEnvironment: true });
    const today = dayOf(new Date());
    for (const { table } of PARTITIONED_TABLES) {
      const kind = (await database.query('SELECT relkind FROM pg_class WHERE oid = to_regclass($1)', [table])).rows[0]?.relkind;
      assert.equal(kind, 'p', `${table} is not a partitioned table`);
      const partitions = await listPartitions(engine.query, table);
      const cutover = await cutoverOf(engine, table);
      assert.ok(partitions.some((p) => p.of.kind === 'default'), `${table} has no DEFAULT partition`);
      const days = partitions.flatMap((p) => (p.of.kind === 'day' ? [p.of.from.toISOString()] : []));
      const expected: string[] = [];
      for (let day = cutover; day <= plusDays(today, DAYS_AHEAD); day = plusDays(day, 1)) expected.push(day.toISOString());
      assert.deepEqual(days, expected, `${table}: the days made ahead at migrate`);
    }
    // A change through the store lands in the old table's partition (before the cutover); a later row in its day.
    await store.createAccount({ username: 'ada', name: 'Ada', timezone: 'UTC', premium: false }, CLI);
    const cutover = await cutoverOf(engine);
    const placed = await database.query(
      `INSERT INTO audit_events (occurred_at, actor, action) VALUES ($1, 'cli:x', 'account.updated') RETURNING tableoid::regclass::text AS partition`,
      [plusDays(cutover, 1)],
    );
    assert.equal(placed.rows[0]?.partition, dayPartitionName('audit_events', plusDays(cutover, 1)));
    const where = await database.query(`SELECT tableoid::regclass::text AS partition FROM audit_events WHERE actor = 'cli:operator'`);
    assert.match(String(where.rows[0]?.partition), /^audit_events_until_\d{8}$/);
  });

  test('an expired day is dropped whole while writes go on: every row inside retention is kept, those before are gone', async (t) => {
    const { database, store, engine } = await fixture(t);
    await store.migrate({ recordEnvironment: true });
    await database.query(`INSERT INTO webhook_endpoints (endpoint_id, url, secret, created_at) VALUES ('we_test', 'http://127.0.0.1:9/', 'whsec_x', now())`);
    // The clock moved on three days past the cutover C: days C .. C+3+DAYS_AHEAD exist; C is to expire, C+1 on is kept.
    const cutover = await cutoverOf(engine);
    const now = plusDays(cutover, 3);
    const made = await maintainTimePartitions(engine, now, new Date(0));
    assert.deepEqual(made.dropped, [], 'nothing was due to expire');
    const ahead = (await listPartitions(engine.query, 'audit_events')).flatMap((p) => (p.of.kind === 'day' ? [p.of.from.getTime()] : []));
    assert.equal(Math.max(...ahead), plusDays(now, DAYS_AHEAD).getTime(), `the days ahead of the clock were not made: ${JSON.stringify(made.made)}`);
    assert.ok(made.made.includes(dayPartitionName('webhook_attempts', plusDays(now, DAYS_AHEAD))), 'each table has its days made ahead');
    for (const day of [0, 1, 2]) await auditRowsOn(database, plusDays(cutover, day), 2000);
    await webhookRowsAt(database, plusDays(cutover, 0.5), 'evt_expiring');
    await webhookRowsAt(database, plusDays(cutover, 1.5), 'evt_kept');
    const before = plusDays(cutover, 1);
    const keptBefore = await count(database, 'audit_events WHERE occurred_at >= $1', [before]);
    assert.equal(keptBefore, 4000);

    // Writers insert entries inside retention (day C+1) all through the maintenance run, each on its own connection.
    const writers = new pg.Pool({ connectionString: database.url, max: 4 });
    const written: number[] = [];
    let writtenDuringMaintenance = 0;
    let maintaining = true;
    let stop = false;
    const write = async () => {
      while (!stop) {
        const { rows } = await writers.query(
          `INSERT INTO audit_events (occurred_at, actor, action) VALUES ($1::timestamptz + random() * interval '1 day', 'cli:writer', 'account.updated') RETURNING id`,
          [before],
        );
        written.push(Number(rows[0]!.id));
        if (maintaining) writtenDuringMaintenance++;
      }
    };
    const running = Array.from({ length: 4 }, write);
    while (written.length < 20) await new Promise((resolve) => setImmediate(resolve));
    const upkeep = await maintainTimePartitions(engine, now, before);
    maintaining = false;
    const afterMaintenance = written.length;
    while (written.length < afterMaintenance + 20) await new Promise((resolve) => setImmediate(resolve));
    stop = true;
    await Promise.all(running);
    await writers.end();

    for (const { table } of PARTITIONED_TABLES) {
      assert.ok(upkeep.dropped.includes(dayPartitionName(table, cutover)), `${table}'s expired day was not dropped: ${JSON.stringify(upkeep)}`);
      assert.ok(upkeep.dropped.some((name) => name.startsWith(`${table}_until_`)), `${table}'s partition before the cutover was not dropped`);
    }
    assert.ok(writtenDuringMaintenance > 0, 'no write went on while the partitions were dropped');
    assert.equal(await count(database, 'audit_events WHERE occurred_at < $1', [before]), 0, 'entries before retention are left');
    assert.equal(
      await count(database, 'audit_events WHERE occurred_at >= $1', [before]),
      keptBefore + written.length,
      'the entries inside retention, and every one written meanwhile, are not all there',
    );
    const ids = new Set((await database.query(`SELECT id FROM audit_events WHERE actor = 'cli:writer'`)).rows.map((row) => Number(row.id)));
    assert.deepEqual(written.filter((id) => !ids.has(id)), [], 'a write acknowledged during the drop is missing');
    for (const table of ['webhook_events', 'webhook_deliveries', 'webhook_attempts']) {
      assert.deepEqual(
        (await database.query(`SELECT DISTINCT event_id FROM ${table}`)).rows.map((row) => row.event_id),
        ['evt_kept'],
        `${table} after the drop`,
      );
    }
  });

  test('an expired day of events still being delivered is kept, with its deliveries, until the delivery ends', async (t) => {
    const { database, store, engine } = await fixture(t);
    await store.migrate({ recordEnvironment: true });
    await database.query(`INSERT INTO webhook_endpoints (endpoint_id, url, secret, created_at) VALUES ('we_test', 'http://127.0.0.1:9/', 'whsec_x', now())`);
    const cutover = await cutoverOf(engine);
    const now = plusDays(cutover, 3);
    await maintainTimePartitions(engine, now, new Date(0));
    await webhookRowsAt(database, plusDays(cutover, 0.25), 'evt_delivered');
    await webhookRowsAt(database, plusDays(cutover, 0.5), 'evt_pending');
    await database.query(`UPDATE webhook_deliveries SET state = 'pending' WHERE event_id = 'evt_pending'`);
    const before = plusDays(cutover, 1);

    const first = await maintainTimePartitions(engine, now, before);
    for (const table of ['webhook_events', 'webhook_deliveries'] as const) {
      assert.ok(!first.dropped.includes(dayPartitionName(table, cutover)), `${table}'s day was dropped with a delivery pending`);
    }
    assert.ok(first.dropped.includes(dayPartitionName('webhook_attempts', cutover)), 'the attempts of that day were kept too');
    assert.deepEqual((await store.webhookOutboxStats()).pending, 1, 'the pending delivery is gone');

    await database.query(`UPDATE webhook_deliveries SET state = 'succeeded' WHERE event_id = 'evt_pending'`);
    const second = await maintainTimePartitions(engine, now, before);
    for (const table of ['webhook_events', 'webhook_deliveries'] as const) {
      assert.ok(second.dropped.includes(dayPartitionName(table, cutover)), `${table}'s day was kept once delivered`);
    }
    assert.equal(await count(database, 'webhook_events'), 0);
  });

  test('no insert fails past the days made: the row lands in DEFAULT, its day is not made then, and it is deleted once expired', async (t) => {
    const { database, store, engine } = await fixture(t);
    await store.migrate({ recordEnvironment: true });
    const cutover = await cutoverOf(engine);
    // Maintenance stopped for weeks: a row 15 days on has no day of its own.
    const late = plusDays(cutover, 15.5);
    const placed = await database.query(
      `INSERT INTO audit_events (occurred_at, actor, action) VALUES ($1, 'cli:late', 'account.updated') RETURNING tableoid::regclass::text AS partition`,
      [late],
    );
    assert.equal(placed.rows[0]?.partition, 'audit_events_default');
    const resumed = await maintainTimePartitions(engine, late, new Date(0));
    assert.ok(resumed.notMade.includes(dayPartitionName('audit_events', dayOf(late))), 'a day whose rows are in DEFAULT was made');
    assert.ok(resumed.made.includes(dayPartitionName('audit_events', plusDays(dayOf(late), 1))), 'the days after it were not made');
    assert.ok(resumed.made.includes(dayPartitionName('webhook_events', dayOf(late))), 'the other tables lost their day too');
    const expired = await maintainTimePartitions(engine, late, plusDays(late, 1));
    assert.equal(expired.deleted.audit_events, 1, 'the expired row in DEFAULT was not deleted');
    assert.equal(await count(database, `audit_events WHERE actor = 'cli:late'`), 0);
  });

  test('a list by time range is planned on the days it needs only, by a custom plan and by a generic one', async (t) => {
    const { database, store, engine } = await fixture(t);
    await store.migrate({ recordEnvironment: true });
    const cutover = await cutoverOf(engine);
    await maintainTimePartitions(engine, plusDays(cutover, 5), new Date(0));
    const wanted = dayPartitionName('audit_events', plusDays(cutover, 2));
    const filters = [
      { since: plusDays(cutover, 2), until: plusDays(cutover, 3) },
      { username: 'ada', since: plusDays(cutover, 2.25), until: plusDays(cutover, 2.5), beforeId: 1000, limit: 10 },
      { actor: 'admin:3kTqv9ZbW2aX', action: 'account.created' as const, since: plusDays(cutover, 2), until: plusDays(cutover, 3) },
    ];
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    t.after(() => client.end());
    client.on('error', () => undefined); // the database is dropped (FORCE) when the test ends
    for (const filter of filters) {
      const statement = auditListStatement(filter);
      // The partitions a plan reads, by their names (not their indexes' names, nor the aliases audit_events_1, ...).
      const scanned = (plan: string) => [...new Set([...plan.matchAll(/ on (audit_events_(?:p\d{8}|until_\d{8}|default))\b/g)].map((match) => match[1]))];
      const custom = (await client.query(`EXPLAIN (COSTS OFF) ${statement.text}`, statement.values)).rows.map((row) => row['QUERY PLAN']).join('\n');
      assert.deepEqual(scanned(custom), [wanted], `the custom plan reads other partitions:\n${custom}`);
      await client.query('DEALLOCATE ALL');
      await client.query(`PREPARE listing AS ${statement.text}`);
      await client.query('SET plan_cache_mode = force_generic_plan');
      const literals = statement.values.map((value) => (value instanceof Date ? `'${value.toISOString()}'` : typeof value === 'number' ? String(value) : `'${String(value)}'`));
      const generic = (await client.query(`EXPLAIN (COSTS OFF) EXECUTE listing (${literals.join(', ')})`)).rows.map((row) => row['QUERY PLAN']).join('\n');
      assert.match(generic, /Subplans Removed: [1-9]/, `the generic plan prunes nothing when it starts:\n${generic}`);
      assert.deepEqual(scanned(generic), [wanted], `the generic plan reads other partitions:\n${generic}`);
      await client.query('RESET plan_cache_mode');
    }
  });

  test('an unpartitioned database with rows migrates whole: every row and id kept, new ids after them, pending deliveries still sent', async (t) => {
    const { database, store } = await fixture(t);
    const migrations = loadPostgresMigrations();
    const before = migrations.findIndex((migration) => migration.name === 'time_partitions_prepare');
    await applyMigrations({ url: database.url, connectTimeoutMs: 10_000 }, migrations.slice(0, before));
    await database.query(
      `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes)
       SELECT now() - i * interval '1 minute', 'cli:old', 'account.updated', i, 'user' || i, '{}' FROM generate_series(1, 5000) i`,
    );
    await database.query(`DELETE FROM audit_events WHERE id % 7 = 0`); // ids with gaps, as a pruned trail has
    await database.query(`INSERT INTO webhook_endpoints (endpoint_id, url, secret, created_at) VALUES ('we_test', 'http://127.0.0.1:9/', 'whsec_x', now())`);
    await database.query(
      `INSERT INTO webhook_events (event_id, type, created_at, payload) SELECT 'evt_' || i, 'account.updated', now() - i * interval '1 hour', '{}'
       FROM generate_series(1, 50) i`,
    );
    await database.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, created_at)
       SELECT event_id, 'we_test', CASE WHEN event_id = 'evt_1' THEN 'pending' ELSE 'succeeded' END, created_at, created_at FROM webhook_events`,
    );
    // A redelivery queued before this build: stamped with the time it was queued, not its event's.
    await database.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at) VALUES ('evt_2', 'we_test', now() - interval '1 minute', now())`,
    );
    await database.query(
      `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms)
       SELECT delivery_id, endpoint_id, event_id, created_at, 200, 5 FROM webhook_deliveries WHERE state = 'succeeded'`,
    );
    const snapshot = async (table: string, key: string, without: string[] = []) =>
      (await database.query(`SELECT to_jsonb(t) ${without.map((column) => `- '${column}'`).join(' ')} AS row FROM ${table} t ORDER BY ${key}`)).rows.map(
        (row) => JSON.stringify(row.row),
      );
    const old = {
      audit: await snapshot('audit_events', 'id'),
      events: await snapshot('webhook_events', 'event_id'),
      deliveries: await snapshot('webhook_deliveries', 'delivery_id', ['created_at']),
      attempts: await snapshot('webhook_attempts', 'attempt_id'),
    };

    await store.migrate({ recordEnvironment: true });

    assert.deepEqual(await snapshot('audit_events', 'id'), old.audit, 'the audit trail changed');
    assert.deepEqual(await snapshot('webhook_events', 'event_id'), old.events, 'the webhook events changed');
    assert.deepEqual(await snapshot('webhook_deliveries', 'delivery_id', ['created_at']), old.deliveries, 'the deliveries changed');
    assert.deepEqual(await snapshot('webhook_attempts', 'attempt_id'), old.attempts, 'the attempts changed');
    assert.equal(await count(database, 'webhook_deliveries d JOIN webhook_events ev USING (event_id) WHERE d.created_at <> ev.created_at'), 0);
    for (const { table } of PARTITIONED_TABLES) {
      assert.equal((await database.query('SELECT relkind FROM pg_class WHERE oid = to_regclass($1)', [table])).rows[0]?.relkind, 'p', `${table} is not partitioned`);
    }

    const maxOld = Math.max(...old.audit.map((row) => Number(JSON.parse(row).id)));
    const event = await store.recordAudit({ action: 'admin_token.created', accountId: null, username: null, changes: {} }, CLI);
    assert.ok(event.id > maxOld, `a new entry took id ${event.id}, not after the old ones (${maxOld})`);
    assert.equal((await store.listAudit({ limit: 1 }))[0]?.id, event.id);

    // The pending delivery and the old redelivery are claimed and recorded as before.
    const now = new Date();
    const claims = await store.claimWebhookDeliveries('worker-1', 10, now, new Date(now.getTime() + 60_000));
    assert.deepEqual(claims.map((claim) => claim.eventId).sort(), ['evt_1', 'evt_2']);
    for (const claim of claims) {
      await store.recordWebhookAttempt(claim, {
        attemptedAt: now, status: 200, latencyMs: 3, response: 'ok', error: null, succeeded: true, nextAttemptAt: null, disableIfFailingSince: now,
      });
    }
    assert.equal(await count(database, `webhook_deliveries WHERE state = 'pending'`), 0, 'an attempt was not recorded on its delivery');
    assert.equal(await count(database, `webhook_attempts WHERE response = 'ok'`), 2, 'the attempts are not all recorded');
  });
});
