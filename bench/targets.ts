// The targets for `npm run bench`, each judged from figures of one run: ratios of servers measured side by side.
import { count, micros, ms, times } from './markdown.ts';
import { median } from './measurement.ts';
import { cpuRatio, ratio, type BenchResults, type Cell, type EndpointRow } from './results.ts';

/** Authentication's own CPU per answer: GET /hello with valid credentials minus without, at most this many µs. */
export const AUTH_COST_TARGET_MICROS = 3;
/** CPU per answer of GET /user at the bench's lean settings over the same at the service's defaults, at least. */
export const DEFAULTS_TARGET = 0.9;
/** The service's peak resident memory over table 1, at most this times the ceiling's. */
export const MEMORY_OF_CEILING_TARGET = 1.15;
const P99_TARGET_MS = 5;
const P99_TARGET_CONNECTIONS = 64;
const MEMORY_TARGET_MB = 150;
const START_TARGET_MS = 400;
const SCALE_TARGET = 0.9;

export interface TargetRow {
  readonly measure: string;
  readonly measured: string;
  readonly target: string;
  /** null: not measured in this run (a server answered wrongly, or the call was left out). */
  readonly met: boolean | null;
}

const atLeast = (value: number | null, target: number) => (value === null ? null : value >= target);
const cpu = (cell: Cell) => (cell.ok ? `${micros(cell.value.cpuMicrosPerAnswer)} µs` : 'n/a');

/** The service's CPU µs per answer with credentials minus without, or null. */
export function authenticationCost(withCredentials: Cell | undefined, without: Cell | undefined): number | null {
  if (withCredentials?.ok !== true || without?.ok !== true) return null;
  return withCredentials.value.cpuMicrosPerAnswer - without.value.cpuMicrosPerAnswer;
}

/** Met when the row's CPU target holds: ceiling / service at least the ratio (and below Fastify when asked). */
export function cpuVerdict(row: EndpointRow): boolean | null {
  const target = row.call.cpuTarget;
  if (target === null) return null;
  const checks = [atLeast(cpuRatio(row.ceiling, row.service), target.ofCeiling)];
  const fastifyOverService = cpuRatio(row.fastify, row.service);
  if (target.belowFastify) checks.push(fastifyOverService === null ? null : fastifyOverService > 1);
  return checks.includes(null) ? null : checks.every(Boolean);
}

/** Met when the row's requests-per-second target holds against the ceiling (and Express when asked). */
export function throughputVerdict(row: EndpointRow): boolean | null {
  const { ofCeiling, ofExpress } = row.call.target;
  const checks: (boolean | null)[] = [];
  if (ofCeiling !== null) checks.push(atLeast(ratio(row.service, row.ceiling), ofCeiling));
  if (ofExpress !== null) checks.push(atLeast(ratio(row.service, row.express), ofExpress));
  if (checks.length === 0 || checks.includes(null)) return null;
  return checks.every(Boolean);
}

/** The targets of table 1, in the order: CPU, authentication, defaults, requests per second, memory. */
export function tableOneTargets(results: BenchResults): TargetRow[] {
  const rows: TargetRow[] = [];
  const byId = new Map(results.endpoints.map((row) => [row.call.id, row]));
  for (const row of results.endpoints) {
    const target = row.call.cpuTarget;
    if (target === null) continue;
    rows.push({
      measure: `CPU per answer, \`${row.call.label}\`: ceiling / service`,
      measured: `${times(cpuRatio(row.ceiling, row.service))} (ceiling ${cpu(row.ceiling)}, service ${cpu(row.service)})`,
      target: `≥ ${target.ofCeiling.toFixed(2)}`,
      met: atLeast(cpuRatio(row.ceiling, row.service), target.ofCeiling),
    });
    if (target.belowFastify) {
      const value = cpuRatio(row.fastify, row.service);
      rows.push({
        measure: `CPU per answer, \`${row.call.label}\`: service against plain Fastify`,
        measured: `service ${cpu(row.service)}, Fastify ${cpu(row.fastify)} (Fastify / service ${times(value)})`,
        target: 'cheaper than Fastify',
        met: value === null ? null : value > 1,
      });
    }
  }
  const hello = byId.get('hello');
  const helloAuth = byId.get('hello-auth');
  if (hello !== undefined && helloAuth !== undefined) {
    const cost = authenticationCost(helloAuth.service, hello.service);
    rows.push({
      measure: "authentication's own CPU per answer, service: `GET /hello` with valid credentials minus without",
      measured: cost === null ? 'n/a' : `${cost.toFixed(1)} µs`,
      target: `≤ ${AUTH_COST_TARGET_MICROS} µs`,
      met: cost === null ? null : cost <= AUTH_COST_TARGET_MICROS,
    });
  }
  if (results.defaultSettings !== null) {
    const { lean, defaults, call } = results.defaultSettings;
    const value = cpuRatio(lean, defaults);
    rows.push({
      measure: `CPU per answer, \`${call.label}\`: lean settings / default settings`,
      measured: `${times(value)} (lean ${cpu(lean)}, defaults ${cpu(defaults)})`,
      target: `≥ ${DEFAULTS_TARGET.toFixed(2)}`,
      met: atLeast(value, DEFAULTS_TARGET),
    });
  }
  for (const row of results.endpoints) {
    const { ofCeiling, ofExpress } = row.call.target;
    const against = row.call.writes ? 'ceiling writing with node:sqlite' : 'ceiling';
    if (ofCeiling !== null) {
      rows.push({
        measure: `req/s, \`${row.call.label}\`: service / ${against}`,
        measured: times(ratio(row.service, row.ceiling)),
        target: `≥ ${ofCeiling.toFixed(2)}`,
        met: atLeast(ratio(row.service, row.ceiling), ofCeiling),
      });
    }
    if (ofExpress !== null) {
      rows.push({
        measure: `req/s, \`${row.call.label}\`: service / Express`,
        measured: times(ratio(row.service, row.express)),
        target: `≥ ${ofExpress.toFixed(2)}`,
        met: atLeast(ratio(row.service, row.express), ofExpress),
      });
    }
  }
  const service = results.endpointPeakRssMB.get('service') ?? null;
  const ceiling = results.endpointPeakRssMB.get('ceiling') ?? null;
  const memory = service === null || ceiling === null ? null : service / ceiling;
  rows.push({
    measure: 'peak resident memory (VmHWM) over table 1: service / ceiling',
    measured: `${times(memory)} (service ${service?.toFixed(1) ?? 'n/a'} MB, ceiling ${ceiling?.toFixed(1) ?? 'n/a'} MB)`,
    target: `≤ ${MEMORY_OF_CEILING_TARGET.toFixed(2)}`,
    met: memory === null ? null : memory <= MEMORY_OF_CEILING_TARGET,
  });
  return rows;
}

/** The earlier issue's targets that are not ratios to a peer: p99 at 64 connections, scaling, memory, start-up. */
export function tableTwoTargets(results: BenchResults): TargetRow[] {
  const rows: TargetRow[] = [];
  const { connections } = results.settings;
  for (const row of results.endpoints) {
    const p99 = row.service.ok ? row.service.value.p99Ms : null;
    // At saturation p99 is mostly queueing: the ceiling's own p99 under the same load says what is reachable here.
    const ceiling = row.ceiling.ok ? ` (ceiling ${ms(row.ceiling.value.p99Ms)} ms)` : '';
    rows.push({
      measure: `p99 latency at ${connections} connections, \`${row.call.label}\``,
      measured: p99 === null ? 'n/a' : `${ms(p99)} ms${ceiling}`,
      target: `< ${P99_TARGET_MS} ms at ${P99_TARGET_CONNECTIONS}`,
      met: connections === P99_TARGET_CONNECTIONS && p99 !== null ? p99 < P99_TARGET_MS : null,
    });
  }
  const smallest = results.scaling[0];
  const largest = results.scaling.at(-1);
  if (smallest !== undefined && largest !== undefined && largest !== smallest) {
    const column = results.settings.scaleConnections.includes(P99_TARGET_CONNECTIONS) ? P99_TARGET_CONNECTIONS : connections;
    const [big, small] = [largest.cells.get(column), smallest.cells.get(column)];
    const value = big === undefined || small === undefined ? null : ratio(big, small);
    rows.push({
      measure: `\`GET /user\` req/s with ${count(largest.accounts)} accounts against ${count(smallest.accounts)}, ${column} connections`,
      measured: times(value),
      target: `≥ ${SCALE_TARGET.toFixed(2)}`,
      met: atLeast(value, SCALE_TARGET),
    });
  }
  if (largest !== undefined) {
    const peak = largest.peakRssMB;
    rows.push({
      measure: `peak resident memory (VmHWM) of the service, ${count(largest.accounts)}-account run`,
      measured: peak === null ? 'n/a' : `${peak.toFixed(1)} MB`,
      target: `< ${MEMORY_TARGET_MB} MB`,
      met: peak === null ? null : peak < MEMORY_TARGET_MB,
    });
  }
  for (const start of results.startTimes) {
    const value = median(start.samplesMs);
    rows.push({
      measure: `start to first answered request (spawn to 200 on \`GET /hello\`), SQLite with ${count(start.accounts)} accounts, median of ${start.samplesMs.length}`,
      measured: `${Math.round(value)} ms (${start.samplesMs.map((sample) => Math.round(sample)).join(', ')})`,
      target: `< ${START_TARGET_MS} ms`,
      met: value < START_TARGET_MS,
    });
  }
  return rows;
}

/** Issue 28's targets for the service on PostgreSQL + Redis, each against the same service on SQLite measured in the same run. */
export const SCALE_OUT_TARGETS = {
  /** CPU per answer of GET /user with one key, every process (service, backends, redis-server) / the SQLite service's. */
  allProcessesOfSqlite: 2.5,
  /** The same, the service's own process only. */
  serviceOfSqlite: 1.75,
  /** PostgreSQL transactions per cached read. */
  transactionsPerCachedRead: 0.01,
  /** Redis round trips per read. */
  redisRoundTripsPerRead: 1,
  /** Keys spread over many accounts: rows written per key per minute (the "last used" stamp). */
  writesPerKeyPerMinute: 1,
} as const;

const atMost = (value: number | null, target: number) => (value === null ? null : value <= target);

/** Service + PostgreSQL backends + redis-server CPU µs per answer, or null. */
export function scaleOutTotal(cell: Cell): number | null {
  if (!cell.ok || cell.value.scaleOut === undefined) return null;
  return scaleOutService(cell)! + cell.value.scaleOut.postgresMicros + cell.value.scaleOut.redisMicros;
}

/** The service's own CPU per answer on PostgreSQL + Redis: during the run, and after it while it delivered the run's events. */
export function scaleOutService(cell: Cell): number | null {
  if (!cell.ok) return null;
  return cell.value.cpuMicrosPerAnswer + (cell.value.scaleOut?.drainServiceMicros ?? 0);
}

/** Table 3's targets; none when table 3 was not measured. */
export function scaleOutTargets(results: BenchResults): TargetRow[] {
  const scale = results.scaleOut;
  if (!scale.measured) return [];
  const rows: TargetRow[] = [];
  const hot = scale.rows.find((row) => row.call.id === 'user');
  const spread = scale.rows.find((row) => row.call.id === 'user-spread');
  const figures = (cell: Cell | undefined) => (cell?.ok === true ? (cell.value.scaleOut ?? null) : null);
  if (hot !== undefined) {
    const sqlite = hot.sqlite.ok ? hot.sqlite.value.cpuMicrosPerAnswer : null;
    const total = scaleOutTotal(hot.postgres);
    const service = scaleOutService(hot.postgres);
    const of = (value: number | null) => (value === null || sqlite === null ? null : value / sqlite);
    const both = (value: number | null) => `${times(of(value))} (${value === null ? 'n/a' : micros(value)} µs against ${sqlite === null ? 'n/a' : micros(sqlite)} µs)`;
    rows.push({
      measure: 'CPU per answer, `GET /user` (one key): PostgreSQL + Redis, every process / the service on SQLite',
      measured: both(total),
      target: `≤ ${SCALE_OUT_TARGETS.allProcessesOfSqlite.toFixed(2)}`,
      met: atMost(of(total), SCALE_OUT_TARGETS.allProcessesOfSqlite),
    });
    rows.push({
      measure: "CPU per answer, `GET /user` (one key): PostgreSQL + Redis, the service's own process / the service on SQLite",
      measured: both(service),
      target: `≤ ${SCALE_OUT_TARGETS.serviceOfSqlite.toFixed(2)}`,
      met: atMost(of(service), SCALE_OUT_TARGETS.serviceOfSqlite),
    });
    const transactions = figures(hot.postgres)?.pgTransactions ?? null;
    rows.push({
      measure: 'PostgreSQL transactions per answer, `GET /user` (one key: a cached read)',
      measured: transactions === null ? 'n/a' : transactions.toFixed(3),
      target: `≤ ${SCALE_OUT_TARGETS.transactionsPerCachedRead}`,
      met: atMost(transactions, SCALE_OUT_TARGETS.transactionsPerCachedRead),
    });
  }
  for (const row of [hot, spread]) {
    if (row === undefined) continue;
    rows.push({
      measure: `Redis round trips per answer, \`${row.call.label}\``,
      measured: row.redisRoundTrips === null ? 'n/a' : row.redisRoundTrips.toFixed(2),
      target: `≤ ${SCALE_OUT_TARGETS.redisRoundTripsPerRead}`,
      met: atMost(row.redisRoundTrips, SCALE_OUT_TARGETS.redisRoundTripsPerRead),
    });
  }
  if (spread !== undefined) {
    const perKey = figures(spread.postgres)?.pgWritesPerKeyPerMinute ?? null;
    rows.push({
      measure: `PostgreSQL rows written per key per minute, \`GET /user\` with keys spread over ${count(scale.accounts)} accounts`,
      measured: perKey === null ? 'n/a' : perKey.toFixed(2),
      target: `≤ ${SCALE_OUT_TARGETS.writesPerKeyPerMinute}`,
      met: atMost(perKey, SCALE_OUT_TARGETS.writesPerKeyPerMinute),
    });
  }
  return rows;
}
