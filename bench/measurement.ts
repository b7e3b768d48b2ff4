// What one measured run yields (one call on one server under one load), and the median of such runs over the rounds: the
// figures the meters fill in, the runners pass around and the reports read. It imports none of them, so they all can import it.
import type { CpuSource } from './cpu-time.ts';

export interface Measurement {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responses: number;
  /** The server's CPU time (every thread, and every worker process) over the run, divided by the answers wrk counted. */
  readonly cpuMicrosPerAnswer: number;
  readonly cpuSource: CpuSource;
  /** Kernel share of the server's CPU time, from /proc/PID/stat's tick sampling; null when too few ticks passed. */
  readonly systemShare: number | null;
  /** Server CPU seconds per wall-clock second: how much of the machine the server took. */
  readonly serverCores: number;
  /** wrk's CPU seconds per wall-clock second: above ~0.9 the load generator, not the server, may be the limit. */
  readonly loadGeneratorCores: number;
  /** What a Meter read around the run (the scale-out table's engines); absent for servers measured alone. */
  readonly scaleOut?: ScaleOutFigures;
}

/** Per answer, over one measured run (or the median of the rounds). */
export interface ScaleOutFigures {
  /** CPU µs of every process connected to the bench database (client backends, and autovacuum when it ran there). */
  readonly postgresMicros: number;
  readonly redisMicros: number;
  /** pg_stat_database's xact_commit + xact_rollback of the bench database. */
  readonly pgTransactions: number;
  /** Rows inserted, updated or deleted in the bench database's tables (pg_stat_user_tables). */
  readonly pgRowsWritten: number;
  /** Every command Redis ran (INFO commandstats), those a script runs included, INFO itself left out. */
  readonly redisCommands: number;
  /** Of them, EVAL, EVALSHA and FCALL: each one round trip, however many commands it runs. */
  readonly redisScripts: number;
  /** Backends that ended during the run: their CPU since the first reading is lost (0 in a sound run). */
  readonly backendsVanished: number;
  /** Rows written per key used, per minute of the run (a run shorter than a minute counts as one); null but for spread keys. */
  readonly pgWritesPerKeyPerMinute: number | null;
  /** WAL bytes the cluster wrote (pg_current_wal_lsn), settled on both sides: every database's, so a quiet cluster is assumed. */
  readonly walBytes: number;
  /** Growth of the bench database on disk (pg_database_size): rows kept, their indexes, and dead versions not yet reused. */
  readonly retainedBytes: number;
  /** The service's CPU after wrk stopped, while it delivered the webhook events the run's writes queued (0 with none queued). */
  readonly drainServiceMicros: number;
}

/**
 * More to read around a measured run than the server's own CPU (the engines of the scale-out table): `begin` just before
 * the server's CPU is first read, `end` just after it is last read, with what wrk counted.
 */
export interface Meter<Figures> {
  begin(): Promise<void>;
  end(answers: number, seconds: number): Promise<Figures>;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median of each figure over the rounds; the CPU source is 'stat' if any round had to fall back to it. */
export function medianMeasurement(taken: readonly Measurement[]): Measurement {
  const of = (figure: (one: Measurement) => number) => median(taken.map(figure));
  const shares = taken.flatMap((one) => (one.systemShare === null ? [] : [one.systemShare]));
  return {
    requestsPerSecond: of((one) => one.requestsPerSecond),
    p50Ms: of((one) => one.p50Ms),
    p99Ms: of((one) => one.p99Ms),
    responses: taken.reduce((sum, one) => sum + one.responses, 0),
    cpuMicrosPerAnswer: of((one) => one.cpuMicrosPerAnswer),
    cpuSource: taken.some((one) => one.cpuSource === 'stat') ? 'stat' : 'schedstat',
    systemShare: shares.length === 0 ? null : median(shares),
    serverCores: of((one) => one.serverCores),
    // The busiest round: what matters is whether wrk ever came near a whole core.
    loadGeneratorCores: Math.max(...taken.map((one) => one.loadGeneratorCores)),
    ...(taken[0]?.scaleOut === undefined ? {} : { scaleOut: medianScaleOut(taken.map((one) => one.scaleOut!)) }),
  };
}

/** The median of each figure over the rounds (vanished backends: the most in any round). */
export function medianScaleOut(taken: readonly ScaleOutFigures[]): ScaleOutFigures {
  const of = (figure: (one: ScaleOutFigures) => number) => median(taken.map(figure));
  const perKey = taken.flatMap((one) => (one.pgWritesPerKeyPerMinute === null ? [] : [one.pgWritesPerKeyPerMinute]));
  return {
    postgresMicros: of((one) => one.postgresMicros),
    redisMicros: of((one) => one.redisMicros),
    pgTransactions: of((one) => one.pgTransactions),
    pgRowsWritten: of((one) => one.pgRowsWritten),
    redisCommands: of((one) => one.redisCommands),
    redisScripts: of((one) => one.redisScripts),
    backendsVanished: Math.max(...taken.map((one) => one.backendsVanished)),
    pgWritesPerKeyPerMinute: perKey.length === 0 ? null : median(perKey),
    walBytes: of((one) => one.walBytes),
    retainedBytes: of((one) => one.retainedBytes),
    drainServiceMicros: of((one) => one.drainServiceMicros),
  };
}
