// Table 3 of results.md: the service on PostgreSQL + Redis beside the same on SQLite, with every process's CPU per answer,
// PostgreSQL transactions and rows written, and Redis commands and round trips per answer.
import { count, type Footnotes, micros, table, times } from './markdown.ts';
import type { BenchResults, Cell } from './results.ts';
import { scaleOutTotal } from './targets.ts';

const perAnswer = (value: number | undefined) => (value === undefined ? 'n/a' : value.toFixed(3));

function rowOf(row: { call: { label: string }; sqlite: Cell; postgres: Cell; redisRoundTrips: number | null }, notes: Footnotes): string[] {
  const { sqlite, postgres } = row;
  const label = `\`${row.call.label}\``;
  if (!sqlite.ok || !postgres.ok) return [label, ...[sqlite, postgres].map((cell) => notes.mark(cell)), ...Array<string>(12).fill('')];
  const figures = postgres.value.scaleOut;
  const total = scaleOutTotal(postgres);
  const base = sqlite.value.cpuMicrosPerAnswer;
  return [
    label,
    micros(base),
    micros(postgres.value.cpuMicrosPerAnswer),
    figures === undefined ? 'n/a' : micros(figures.postgresMicros),
    figures === undefined ? 'n/a' : micros(figures.redisMicros),
    total === null ? 'n/a' : micros(total),
    times(total === null ? null : total / base),
    times(postgres.value.cpuMicrosPerAnswer / base),
    perAnswer(figures?.pgTransactions),
    perAnswer(figures?.pgRowsWritten),
    figures === undefined ? 'n/a' : `${perAnswer(figures.redisCommands)} (${perAnswer(figures.redisScripts)})`,
    row.redisRoundTrips === null ? 'n/a' : row.redisRoundTrips.toFixed(2),
    count(sqlite.value.requestsPerSecond),
    count(postgres.value.requestsPerSecond),
  ];
}

/** The section's paragraphs and table; one sentence saying why when table 3 was not measured. */
export function scaleOutSection(results: BenchResults, notes: Footnotes): string[] {
  const scale = results.scaleOut;
  const heading = '## Table 3: the scale-out path, PostgreSQL + Redis beside SQLite';
  if (!scale.measured) return [heading, `Not measured in this run: ${scale.reason}.`];
  const vanished = Math.max(0, ...scale.rows.flatMap((row) => (row.postgres.ok ? [row.postgres.value.scaleOut?.backendsVanished ?? 0] : [])));
  return [
    heading,
    `The service at the lean settings on SQLite, and on PostgreSQL (DATABASE_URL) with Redis (REDIS_URL), each database holding ` +
      `${count(scale.accounts)} Premium accounts with real keys (seeded in ${scale.seedingSeconds.sqlite.toFixed(1)} s on SQLite, ` +
      `${scale.seedingSeconds.postgres.toFixed(1)} s on PostgreSQL) besides the bench's own; same load as table 1, measured in turn. ` +
      'CPU µs per answer counts every process that works for it: the service (every thread), every process connected to the ' +
      "bench's PostgreSQL database (its pool's backends, and autovacuum whenever it worked there; backends that appear in a run count " +
      `whole${vanished > 0 ? `; ${vanished} backend(s) ended mid-run and lost their CPU from /proc` : ''}), and a redis-server of ` +
      "the bench's own (so no other client is counted). PostgreSQL's WAL writer, checkpointer and background writer serve " +
      'every database of the cluster and are not counted. `total / SQLite` is the sum over the service on SQLite alone.',
    'PostgreSQL transactions (`pg_stat_database`) and rows written (`pg_stat_user_tables`) are read after a settle of ' +
      `${scale.settleSeconds} s on both sides of each run: an idle backend reports its statistics up to 10 s late. Redis commands ` +
      "are INFO commandstats' (each command a script runs counts too; in brackets, the scripts); round trips are what the " +
      `service made, counted by Redis (INFO's total_reads_processed: a pipelined write is one) over 50 answers sent one at a time after the timed runs. Targets: the top table.`,
    table(
      [
        'call',
        'SQLite: service µs',
        'PG: service µs',
        'PG: backends µs',
        'PG: redis-server µs',
        'PG: total µs',
        'total / SQLite',
        'service / SQLite',
        'PG transactions / answer',
        'PG rows written / answer',
        'Redis commands / answer (scripts)',
        'Redis round trips / answer',
        'SQLite req/s',
        'PG req/s',
      ],
      scale.rows.map((row) => rowOf(row, notes)),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
}
