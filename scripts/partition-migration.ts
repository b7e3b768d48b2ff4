// `node scripts/partition-migration.ts --admin-url URL [--rows N]`: measures the online migration to time partitions (008,
// 009) and a partition drop on a database holding N rows in each of the four tables, while writers keep writing: how long
// each step takes, which locks it takes on the tables, and the longest any write waited. docs/operations.md has the figures.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { dayPartitionName, listPartitions, maintainTimePartitions } from '../src/store/audit/time-partitions.ts';
import { applyMigrations, loadPostgresMigrations } from '../src/store/postgres/migrate.ts';
import { PostgresEngine } from '../src/store/postgres/postgres-engine.ts';

const USAGE = `node scripts/partition-migration.ts --admin-url URL [--rows N]

  --admin-url URL  a PostgreSQL database whose user may create databases; a scratch database is made and dropped beside it
  --rows N         rows seeded in each of audit_events, webhook_events, webhook_deliveries, webhook_attempts   default 1000000
`;

const TABLES = ['audit_events', 'webhook_events', 'webhook_deliveries', 'webhook_attempts'];
const TABLE_OR_PARTITION = /^(audit_events|webhook_events|webhook_deliveries|webhook_attempts)(_until_\d{8}|_p\d{8}|_default)?$/;

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function seed(url: string, rows: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Spread over the 30 days before now, as a month of traffic would be.
    const at = `now() - (i::float / $1) * interval '30 days'`;
    await client.query(`INSERT INTO webhook_endpoints (endpoint_id, url, secret, created_at) VALUES ('we_1', 'https://example.com/', 'whsec_x', now())`);
    await client.query(
      `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes, request_id, address)
       SELECT ${at}, 'key:AAAABBBBCCCC', 'account.updated', i, 'user' || i, '{"name":{"old":"a","new":"b"}}', 'req-' || i, '203.0.113.7'
       FROM generate_series(1, $1::int) i`,
      [rows],
    );
    await client.query(
      `INSERT INTO webhook_events (event_id, type, created_at, payload) SELECT 'evt_' || i, 'account.updated', ${at}, repeat('x', 300)
       FROM generate_series(1, $1::int) i`,
      [rows],
    );
    await client.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at, created_at)
       SELECT event_id, 'we_1', 'succeeded', 1, created_at, created_at FROM webhook_events`,
    );
    await client.query(
      `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, response)
       SELECT delivery_id, endpoint_id, event_id, created_at, 204, 12, '' FROM webhook_deliveries`,
    );
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

interface Writers {
  stop(): Promise<{ writes: number; maxWaitMs: number }>;
  reset(): void;
}

/** Two connections writing as a change does (an audit entry, its event and its delivery, one transaction), timing each. */
function startWriters(url: string): Writers {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined); // the scratch database is dropped (FORCE) at the end
  let stopping = false;
  let writes = 0;
  let maxWaitMs = 0;
  const loop = async (worker: number) => {
    let n = 0;
    while (!stopping) {
      const started = performance.now();
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(
          `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes) VALUES (clock_timestamp(), 'cli:w', 'account.updated', 1, 'w', '{}')
           RETURNING occurred_at`,
        );
        const id = `evt_w${worker}_${n++}_${randomBytes(4).toString('hex')}`;
        await client.query(`INSERT INTO webhook_events (event_id, type, created_at, payload) VALUES ($1, 'account.updated', $2, '{}')`, [id, rows[0].occurred_at]);
        await client.query(
          `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at, state) VALUES ($1, 'we_1', $2, $2, 'succeeded')`,
          [id, rows[0].occurred_at],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
      writes++;
      maxWaitMs = Math.max(maxWaitMs, performance.now() - started);
    }
  };
  const running = [loop(1), loop(2)];
  return {
    reset: () => {
      writes = 0;
      maxWaitMs = 0;
    },
    stop: async () => {
      stopping = true;
      await Promise.all(running);
      await pool.end();
      return { writes, maxWaitMs };
    },
  };
}

interface Step {
  statement: string;
  firstSeen: number;
  lastSeen: number;
  locks: Set<string>;
}

/** Samples what the migrating session runs and which locks it holds on the four tables (and their partitions), every few ms. */
function watchMigration(url: string, applicationName: string): { stop(): Promise<Step[]> } {
  const client = new pg.Client({ connectionString: url });
  const steps: Step[] = [];
  let stopping = false;
  const done = (async () => {
    await client.connect();
    while (!stopping) {
      const { rows } = await client.query(
        `SELECT a.query, l.mode, c.relname FROM pg_stat_activity a
           LEFT JOIN pg_locks l ON l.pid = a.pid AND l.granted AND l.locktype = 'relation'
           LEFT JOIN pg_class c ON c.oid = l.relation
         WHERE a.application_name = $1 AND a.state = 'active'`,
        [applicationName],
      );
      const now = performance.now();
      for (const row of rows) {
        const statement = String(row.query).replace(/--[^\n]*\n/g, '').replace(/\s+/g, ' ').trim().slice(0, 90);
        let step = steps.at(-1);
        if (step?.statement !== statement) {
          step = { statement, firstSeen: now, lastSeen: now, locks: new Set() };
          steps.push(step);
        }
        step.lastSeen = now;
        // The tables and their partitions only, not their indexes and sequences.
        if (TABLE_OR_PARTITION.test(String(row.relname ?? '')) && row.mode !== null) step.locks.add(`${row.mode} on ${row.relname}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await client.end();
  })();
  return {
    stop: async () => {
      stopping = true;
      await done;
      return steps;
    },
  };
}

function summarise(title: string, wallMs: number, steps: Step[], writers: { writes: number; maxWaitMs: number }): void {
  console.log(`\n### ${title}: ${(wallMs / 1000).toFixed(2)} s; writers made ${writers.writes} changes meanwhile, the longest took ${writers.maxWaitMs.toFixed(0)} ms\n`);
  console.log('| statement (as sampled) | seen for | locks held on the tables |');
  console.log('|---|---|---|');
  for (const step of steps) {
    if (step.statement.startsWith('SELECT pg_advisory') || step.statement.startsWith('SET ') || step.statement.startsWith('RESET')) continue;
    const locks = [...new Set([...step.locks].map((lock) => lock.replace(/_(until_|p)\d{8}/, '_$1…')))].join('; ');
    console.log(`| \`${step.statement}\` | ${(step.lastSeen - step.firstSeen).toFixed(0)} ms | ${locks} |`);
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'admin-url': { type: 'string' }, rows: { type: 'string', default: '1000000' }, help: { type: 'boolean' } } });
  if (values.help === true || values['admin-url'] === undefined) {
    process.stdout.write(USAGE);
    return values.help === true ? 0 : 2;
  }
  const rows = Number(values.rows);
  const adminUrl = values['admin-url'];
  const name = `partition_migration_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = withDatabase(adminUrl, name);
  try {
    const migrations = loadPostgresMigrations();
    const prepare = migrations.findIndex((migration) => migration.name === 'time_partitions_prepare');
    const connection = { url, connectTimeoutMs: 10_000 };
    await applyMigrations(connection, migrations.slice(0, prepare));
    let started = performance.now();
    await seed(url, rows);
    console.log(`PostgreSQL ${(await admin.query('SHOW server_version')).rows[0].server_version}; seeded ${rows.toLocaleString('en-US')} rows in each of ${TABLES.join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    for (const [title, upTo] of [
      ['008 (checks validated, unique indexes built concurrently)', prepare + 1],
      ['009 (the swap, one transaction)', prepare + 2],
    ] as const) {
      const writers = startWriters(url);
      await new Promise((resolve) => setTimeout(resolve, 500));
      writers.reset();
      const watch = watchMigration(url, 'account-api migrate');
      started = performance.now();
      await applyMigrations(connection, migrations.slice(0, upTo));
      const wall = performance.now() - started;
      const steps = await watch.stop();
      summarise(title, wall, steps, await writers.stop());
    }

    // A day of rows-many entries made expired, then dropped while the writers go on.
    const engine = new PostgresEngine({ url, poolMax: 2, connectTimeoutMs: 10_000, statementTimeoutMs: 600_000 });
    try {
      const until = (await listPartitions(engine.query, 'audit_events')).find((p) => p.of.kind === 'until');
      if (until === undefined || until.of.kind !== 'until') throw new Error('no partition before the cutover');
      const day = until.of.until;
      // The clock at the cutover day: its partition is made (with the week after it).
      await maintainTimePartitions(engine, day, new Date(0));
      await engine.rowCount(
        `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes)
         SELECT $1::timestamptz + (i::float / $2) * interval '1 day', 'cli:seed', 'account.updated', i, 'user' || i, '{}' FROM generate_series(1, $2::int) i`,
        [day, rows],
      );
      const writers = startWriters(url);
      await new Promise((resolve) => setTimeout(resolve, 500));
      writers.reset();
      started = performance.now();
      const upkeep = await maintainTimePartitions(engine, new Date(day.getTime() + 86_400_000), new Date(day.getTime() + 86_400_000));
      const wall = performance.now() - started;
      const result = await writers.stop();
      const dropped = dayPartitionName('audit_events', day);
      if (!upkeep.dropped.includes(dropped)) throw new Error(`${dropped} was not dropped: ${JSON.stringify(upkeep)}`);
      console.log(
        `\n### Retention run dropping ${dropped} (${rows.toLocaleString('en-US')} rows) and the old tables' partitions: ${(wall / 1000).toFixed(2)} s; ` +
          `dropped ${upkeep.dropped.length} partitions; writers made ${result.writes} changes meanwhile, the longest took ${result.maxWaitMs.toFixed(0)} ms`,
      );
    } finally {
      await engine.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  return 0;
}

process.exitCode = await main();
