// What the service on PostgreSQL + Redis costs besides its own process: the CPU of its PostgreSQL backends and of
// redis-server, PostgreSQL transactions and rows written, and Redis commands, each read before and after a measured run.
//
// PostgreSQL's counters (pg_stat_database, pg_stat_user_tables) are flushed by each backend at most once a second while it
// works, and by an idle backend only up to 10 s later (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): they are read after a settle
// (--pg-settle) on both sides of the run. The CPU readings are taken at once, as the service's are.
import { Redis } from 'ioredis';
import pg from 'pg';
import { clockTicksPerSecond, cpuBetween, readCpu } from './cpu-time.ts';
import type { Meter, ScaleOutFigures } from './measurement.ts';

const PROBE_NAME = 'account-api bench probe';

/** The bench's connection to PostgreSQL's statistics, from another database so that its own queries count in none of the bench's. */
export class PostgresProbe {
  readonly #client: pg.Client;
  readonly #database: string;

  private constructor(client: pg.Client, database: string) {
    this.#client = client;
    this.#database = database;
  }

  static async open(adminUrl: string, database: string): Promise<PostgresProbe> {
    const client = new pg.Client({ connectionString: adminUrl, application_name: PROBE_NAME });
    client.on('error', () => undefined);
    await client.connect();
    return new PostgresProbe(client, database);
  }

  /** Every process connected to the bench database now. */
  async backends(): Promise<number[]> {
    const { rows } = await this.#client.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2', [
      this.#database,
      PROBE_NAME,
    ]);
    return rows.map((row: { pid: number }) => row.pid);
  }

  /** xact_commit + xact_rollback of the bench database. A statement outside a transaction block reads fresh statistics. */
  async transactions(): Promise<number> {
    const { rows } = await this.#client.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [this.#database]);
    return Number(rows[0].n);
  }

  /** The cluster's WAL position, in bytes from the start, and the bench database's size on disk. */
  async storage(): Promise<{ walBytes: number; databaseBytes: number }> {
    const { rows } = await this.#client.query(
      "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal, pg_database_size($1)::float8 AS size",
      [this.#database],
    );
    return { walBytes: Number(rows[0].wal), databaseBytes: Number(rows[0].size) };
  }

  close(): Promise<void> {
    return this.#client.end();
  }
}

/**
 * pg_stat_user_tables shows the tables of the database one is connected to: rows written are read through a second
 * connection, to the bench database. Each reading is one transaction there, which the meter subtracts.
 */
export class RowsProbe {
  readonly #client: pg.Client;
  private constructor(client: pg.Client) {
    this.#client = client;
  }
  static async open(databaseUrl: string): Promise<RowsProbe> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: PROBE_NAME });
    client.on('error', () => undefined);
    await client.connect();
    return new RowsProbe(client);
  }
  /** Webhook deliveries not yet delivered nor given up on. */
  async pendingDeliveries(): Promise<number> {
    const { rows } = await this.#client.query("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'");
    return Number(rows[0].n);
  }
  async rowsWritten(): Promise<number> {
    const { rows } = await this.#client.query(
      "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) AS n FROM pg_stat_user_tables WHERE schemaname = 'public'",
    );
    return Number(rows[0].n);
  }
  close(): Promise<void> {
    return this.#client.end();
  }
}

/** Redis's command counts, read with INFO commandstats (which counts itself under cmdstat_info: left out). */
export async function redisCommandCounts(redis: Redis): Promise<{ commands: number; scripts: number }> {
  const text = await redis.info('commandstats');
  let commands = 0;
  let scripts = 0;
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const [name, calls] = [match[1]!, Number(match[2])];
    if (name === 'info') continue;
    commands += calls;
    if (/^(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro)$/.test(name)) scripts += calls;
  }
  return { commands, scripts };
}

/** CPU nanoseconds of each process so far (schedstat over its threads; clock ticks where there is none). */
export function cpuByPid(pids: readonly number[]): Map<number, number> {
  const nsPerTick = 1e9 / clockTicksPerSecond();
  const used = new Map<number, number>();
  for (const pid of pids) {
    const reading = readCpu(pid, () => [pid]);
    if (reading.userTicks + reading.systemTicks === 0 && reading.schedstatNs === 0) continue; // gone
    used.set(pid, reading.schedstatNs ?? (reading.userTicks + reading.systemTicks) * nsPerTick);
  }
  return used;
}

/**
 * CPU used between two cpuByPid readings: backends that appeared in between count whole (they started within the run),
 * those that vanished are lost and counted apart.
 */
export function cpuBetweenPids(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): { ns: number; vanished: number } {
  let ns = 0;
  for (const [pid, now] of after) ns += now - (before.get(pid) ?? 0);
  const vanished = [...before.keys()].filter((pid) => !after.has(pid)).length;
  return { ns, vanished };
}

export interface ScaleOutProbes {
  readonly postgres: PostgresProbe;
  readonly rows: RowsProbe;
  readonly redis: Redis;
  readonly redisPid: number;
  /** Wait before reading PostgreSQL's counters, in ms. */
  readonly settleMs: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** How long a run's queued webhook deliveries may take to drain before the bench gives up on the run. */
const DRAIN_LIMIT_MS = 300_000;

/**
 * A Meter for one run of the service on PostgreSQL + Redis. `spread`, when the load cycles through many keys: how many, and
 * how many requests may be in flight when wrk stops (answered and written by the server, but not counted by wrk).
 * `drainOf`, for writes: the service, whose CPU is counted while it delivers what the run queued (a write's event belongs to
 * its cost). Reads queue nothing, and are not made to wait (each reading of the queue is a transaction in the database).
 */
export function scaleOutMeter(
  probes: ScaleOutProbes,
  spread: { keys: number; inFlight: number } | null,
  drainOf: { readonly servicePid: number } | null,
): Meter<ScaleOutFigures> {
  let start: {
    storage: { walBytes: number; databaseBytes: number };
    counters: { transactions: number; rowsWritten: number };
    redis: { commands: number; scripts: number };
    backends: Map<number, number>;
    redisCpu: number;
  } | null = null;
  const redisCpu = () => cpuByPid([probes.redisPid]).get(probes.redisPid) ?? 0;
  // The transactions first: the rows probe's reading that follows is one more in the bench database (subtracted below).
  const counters = async () => ({ transactions: await probes.postgres.transactions(), rowsWritten: await probes.rows.rowsWritten() });
  return {
    async begin() {
      await sleep(probes.settleMs);
      const counted = await counters();
      const storage = await probes.postgres.storage();
      const redis = await redisCommandCounts(probes.redis);
      start = { storage, counters: counted, redis, backends: cpuByPid(await probes.postgres.backends()), redisCpu: redisCpu() };
    },
    async end(answers, seconds) {
      if (start === null) throw new Error('scaleOutMeter: end() before begin()');
      let drainReadings = 0;
      let drainNs = 0;
      if (drainOf !== null) {
        const drainFrom = readCpu(drainOf.servicePid);
        for (const began = Date.now(); ; await sleep(100)) {
          drainReadings += 1;
          if ((await probes.rows.pendingDeliveries()) === 0) break;
          if (Date.now() - began > DRAIN_LIMIT_MS) throw new Error(`webhook deliveries still pending ${DRAIN_LIMIT_MS / 1000} s after the run`);
        }
        drainNs = cpuBetween(drainFrom, readCpu(drainOf.servicePid)).ns;
      }
      const backends = cpuBetweenPids(start.backends, cpuByPid(await probes.postgres.backends()));
      const redisNs = redisCpu() - start.redisCpu;
      const redis = await redisCommandCounts(probes.redis);
      await sleep(probes.settleMs);
      const counted = await counters();
      const storage = await probes.postgres.storage();
      // The rows probe's readings of pending deliveries are transactions in the bench database too.
      const transactions = counted.transactions - start.counters.transactions - 1 - drainReadings;
      const rowsWritten = counted.rowsWritten - start.counters.rowsWritten;
      // Each request of the run takes the next key: the answers, and the requests in flight at the end, which wrk drops uncounted.
      const keysUsed = spread === null ? null : Math.min(answers + spread.inFlight, spread.keys);
      const per = (value: number) => value / answers;
      return {
        postgresMicros: per(backends.ns / 1000),
        redisMicros: per(redisNs / 1000),
        pgTransactions: per(transactions),
        pgRowsWritten: per(rowsWritten),
        redisCommands: per(redis.commands - start.redis.commands),
        redisScripts: per(redis.scripts - start.redis.scripts),
        backendsVanished: backends.vanished,
        pgWritesPerKeyPerMinute: keysUsed === null || keysUsed === 0 ? null : rowsWritten / keysUsed / Math.max(1, seconds / 60),
        walBytes: per(storage.walBytes - start.storage.walBytes),
        retainedBytes: per(storage.databaseBytes - start.storage.databaseBytes),
        drainServiceMicros: per(drainNs / 1000),
      };
    },
  };
}
