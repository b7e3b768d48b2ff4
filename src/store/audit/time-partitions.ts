// Retention by time partitions on PostgreSQL: the audit trail, webhook events, deliveries and attempts are partitioned by UTC
// day (migrations 008 and 009); this makes the days ahead, drops whole days once expired, and deletes in bounded batches what
// sits in the two partitions that are not one day (the old table's, before the cutover, and the DEFAULT one).
// docs/operations.md ("Retention by time partitions") has the why, the locks and the figures; test/contract/time-partitions
// .test.ts guards it.
import type { PostgresEngine } from '../postgres/postgres-engine.ts';
import type { Query } from '../postgres/query.ts';
import { deleteInBatches } from '../pruning.ts';

/** Each partitioned table and the column it is partitioned by. */
export const PARTITIONED_TABLES = [
  { table: 'audit_events', column: 'occurred_at' },
  { table: 'webhook_events', column: 'created_at' },
  { table: 'webhook_deliveries', column: 'created_at' },
  { table: 'webhook_attempts', column: 'attempted_at' },
] as const;

export type PartitionedTable = (typeof PARTITIONED_TABLES)[number]['table'];

/** Days made ahead of today: a week of maintenance may fail (and say so in the log) before a row lands in DEFAULT. */
export const DAYS_AHEAD = 7;

/**
 * How long a partition's DDL waits for its lock. Dropping a partition takes ACCESS EXCLUSIVE on its parent, and writes queue
 * behind a waiting lock: this bounds that queue. On a timeout the next run (hourly) tries again.
 */
export const PARTITION_LOCK_TIMEOUT_MS = 1000;

/** Taken per DDL transaction, so instances maintaining at once take turns instead of failing on each other's partitions. */
const MAINTENANCE_LOCK_KEY = '7263017455301265219';

const DAY_MS = 86_400_000;

export type PartitionKind =
  | { readonly kind: 'day'; readonly from: Date }
  | { readonly kind: 'until'; readonly until: Date }
  | { readonly kind: 'default' };

export interface Partition {
  readonly name: string;
  readonly of: PartitionKind;
}

/** The UTC midnight at or before `at`. */
export function dayOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

const stamp = (day: Date) => day.toISOString().slice(0, 10).replaceAll('-', '');

/** `audit_events_p20261126` holds [2026-11-26, 2026-11-27) UTC. */
export function dayPartitionName(table: PartitionedTable, day: Date): string {
  return `${table}_p${stamp(day)}`;
}

/** What a partition holds, read from its name (the names are this module's and migration 009's). */
export function partitionOf(table: PartitionedTable, name: string): PartitionKind | null {
  if (name === `${table}_default`) return { kind: 'default' };
  const match = /^_(p|until_)(\d{4})(\d{2})(\d{2})$/.exec(name.slice(table.length));
  if (!name.startsWith(table) || match === null) return null;
  const day = new Date(`${match[2]}-${match[3]}-${match[4]}T00:00:00Z`);
  return match[1] === 'p' ? { kind: 'day', from: day } : { kind: 'until', until: day };
}

export async function listPartitions(query: Query, table: PartitionedTable): Promise<Partition[]> {
  const rows = await query(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1) ORDER BY c.relname`,
    [table],
  );
  return rows.flatMap((row) => {
    const of = partitionOf(table, String(row.name));
    return of === null ? [] : [{ name: String(row.name), of }];
  });
}

/**
 * The days without a partition from today (or the cutover, if later) to DAYS_AHEAD on. A past day left without one (maintenance
 * stopped that long) is not made afterwards: its rows are in DEFAULT, which would refuse the attach.
 */
export function daysToMake(partitions: readonly Partition[], now: Date): Date[] {
  const cutover = partitions.flatMap((p) => (p.of.kind === 'until' ? [p.of.until.getTime()] : []))[0] ?? 0;
  const made = new Set(partitions.flatMap((p) => (p.of.kind === 'day' ? [p.of.from.getTime()] : [])));
  const today = dayOf(now).getTime();
  const days: Date[] = [];
  for (let day = Math.max(cutover, today); day <= today + DAYS_AHEAD * DAY_MS; day += DAY_MS) if (!made.has(day)) days.push(new Date(day));
  return days;
}

/** A partition wholly before `before`: a day's once its end has passed, the old table's once the cutover has. */
export function isExpired(partition: Partition, before: Date): boolean {
  if (partition.of.kind === 'day') return partition.of.from.getTime() + DAY_MS <= before.getTime();
  if (partition.of.kind === 'until') return partition.of.until.getTime() <= before.getTime();
  return false;
}

/** What one maintenance run did, for the log and the tests. */
export interface PartitionUpkeep {
  readonly made: string[];
  readonly dropped: string[];
  /** Days not made: their lock was not had in time, or the DEFAULT partition holds rows of that day (see makeDay). */
  readonly notMade: string[];
  /** Partitions left for the next run: their lock was not had in time. (A day kept for a pending delivery is in neither.) */
  readonly notDropped: string[];
  /** Rows deleted one batch at a time from the old table's partition and DEFAULT, per table. */
  readonly deleted: Record<PartitionedTable, number>;
  /** The audit entries in partitions dropped, as PostgreSQL last counted them (pg_class.reltuples, an estimate). */
  readonly auditEntriesDropped: number;
}

/** Runs `work` in a transaction under the maintenance lock and a lock timeout; false when either was not had. */
async function ddl(engine: PostgresEngine, work: (query: Query) => Promise<void>): Promise<boolean> {
  try {
    return await engine.transaction(async (query) => {
      await query(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
      const [row] = await query('SELECT pg_try_advisory_xact_lock($1) AS held', [MAINTENANCE_LOCK_KEY]);
      if (row?.held !== true) return false;
      await work(query);
      return true;
    });
  } catch (error) {
    // 55P03 lock_not_available, 23514 check_violation (DEFAULT holds rows of that day): the next run tries again.
    const code = (error as { cause?: { code?: string }; code?: string }).cause?.code ?? (error as { code?: string }).code;
    if (code === '55P03' || code === '23514') return false;
    throw error;
  }
}

/**
 * Made apart, then attached: CREATE TABLE ... PARTITION OF would take ACCESS EXCLUSIVE on the parent, ATTACH PARTITION takes
 * SHARE UPDATE EXCLUSIVE (reads and writes go on) and scans only the new, empty table and DEFAULT (empty unless maintenance
 * stopped for DAYS_AHEAD days; if DEFAULT holds rows of that day, the attach fails and those rows are deleted by batches).
 */
function makeDay(engine: PostgresEngine, table: PartitionedTable, day: Date): Promise<boolean> {
  const name = dayPartitionName(table, day);
  const from = day.toISOString();
  const to = new Date(day.getTime() + DAY_MS).toISOString();
  return ddl(engine, async (query) => {
    // Another instance may have made it since the partitions were listed.
    if ((await query(`SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass('${name}')`)).length > 0) return;
    await query(`CREATE TABLE IF NOT EXISTS ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`);
    await query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
  });
}

/** DROP TABLE takes ACCESS EXCLUSIVE on the parent for the catalog change only, bounded by PARTITION_LOCK_TIMEOUT_MS. */
function dropPartition(engine: PostgresEngine, name: string, onRows: (rows: number) => void): Promise<boolean> {
  return ddl(engine, async (query) => {
    const [row] = await query('SELECT greatest(reltuples, 0)::bigint AS rows FROM pg_class WHERE oid = to_regclass($1)', [name]);
    await query(`DROP TABLE IF EXISTS ${name}`);
    onRows(Number(row?.rows ?? 0));
  });
}

/**
 * An event still being delivered is kept, with its pending deliveries, until its delivery ends, whatever its age (as on
 * SQLite): a day of events or deliveries is kept while its deliveries' partition holds a pending one (the partial index
 * webhook_deliveries_due answers), and the batches pass over them.
 */
const KEEP: Record<PartitionedTable, (name: string) => string> = {
  audit_events: () => '',
  webhook_events: (name) =>
    `AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ${name}.event_id AND d.created_at = ${name}.created_at AND d.state = 'pending')`,
  webhook_deliveries: () => `AND state <> 'pending'`,
  webhook_attempts: () => '',
};

async function holdsPendingDelivery(query: Query, table: PartitionedTable, partition: string): Promise<boolean> {
  if (table !== 'webhook_events' && table !== 'webhook_deliveries') return false;
  const deliveries = `webhook_deliveries${partition.slice(table.length)}`;
  const [present] = await query(`SELECT to_regclass('${deliveries}') IS NOT NULL AS present`);
  if (present?.present !== true) return false;
  return (await query(`SELECT 1 FROM ${deliveries} WHERE state = 'pending' LIMIT 1`)).length > 0;
}

/** Rows before `before` in a partition that is not a whole day, in bounded batches (pruning.ts), by their physical address. */
function deleteRowsBefore(engine: PostgresEngine, table: PartitionedTable, name: string, column: string, before: Date): Promise<number> {
  const batch = `DELETE FROM ${name} WHERE ctid = ANY (ARRAY (SELECT ctid FROM ${name} WHERE ${column} < $1 ${KEEP[table](name)} LIMIT $2))`;
  return deleteInBatches((limit) => engine.rowCount(batch, [before, limit]));
}

/** Days made ahead of `now` only: at start (PostgresSchema.migrate), so a fresh database has them before any write. */
export async function makePartitionsAhead(engine: PostgresEngine, now: Date): Promise<string[]> {
  const made: string[] = [];
  for (const { table } of PARTITIONED_TABLES) {
    for (const day of daysToMake(await listPartitions(engine.query, table), now)) {
      if (await makeDay(engine, table, day)) made.push(dayPartitionName(table, day));
    }
  }
  return made;
}

/**
 * One maintenance run, hourly from serve (audit-pruning.ts, through pruneAudit): the days ahead of `now` made, every
 * partition wholly before `before` dropped, and the rows before `before` deleted from the two that are not one day.
 * Rows in a day's partition outlive `before` by less than a day: they go with their day.
 */
export async function maintainTimePartitions(engine: PostgresEngine, now: Date, before: Date): Promise<PartitionUpkeep> {
  const upkeep = {
    made: [] as string[],
    dropped: [] as string[],
    notMade: [] as string[],
    notDropped: [] as string[],
    deleted: { audit_events: 0, webhook_events: 0, webhook_deliveries: 0, webhook_attempts: 0 },
    auditEntriesDropped: 0,
  };
  for (const { table, column } of PARTITIONED_TABLES) {
    const partitions = await listPartitions(engine.query, table);
    for (const day of daysToMake(partitions, now)) {
      const name = dayPartitionName(table, day);
      (await makeDay(engine, table, day)) ? upkeep.made.push(name) : upkeep.notMade.push(name);
    }
    for (const partition of partitions) {
      if (isExpired(partition, before) && !(await holdsPendingDelivery(engine.query, table, partition.name))) {
        const dropped = await dropPartition(engine, partition.name, (rows) => {
          if (table === 'audit_events') upkeep.auditEntriesDropped += rows;
        });
        (dropped ? upkeep.dropped : upkeep.notDropped).push(partition.name);
      } else if (partition.of.kind !== 'day') {
        upkeep.deleted[table] += await deleteRowsBefore(engine, table, partition.name, column, before);
      }
    }
  }
  return upkeep;
}
