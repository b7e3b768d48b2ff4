// Turns the at-size bench's results into at-size/results.md: one table, a column per size, the largest size's ratio to the
// smallest and a "flat" verdict per measure.
import { medianStart, type AtSizeResults, type AtSizeRow } from './at-size.ts';
import { count, Footnotes, machineRows, megabytes, micros, ms, table, times } from './markdown.ts';
import type { Cell } from './results.ts';
import type { ScaleOutFigures } from './measurement.ts';

/** A measure is flat when the larger size costs at most this many times the smaller (req/s: at least its inverse). */
export const FLAT = 1.25;
/**
 * Or when it costs at most this many µs more per answer: a figure of a few tenths of a µs (the one key's PostgreSQL backends,
 * which it reaches once a minute) doubles with a single stray scheduler tick.
 */
export const FLAT_MICROS = 1;

interface Measure {
  readonly label: string;
  readonly value: (row: AtSizeRow) => number | null;
  readonly format: (value: number) => string;
  /** 'lower': a cost (flat: ratio ≤ FLAT); 'higher': a rate (flat: ratio ≥ 1 / FLAT); null: context, no verdict. */
  readonly better: 'lower' | 'higher' | null;
  /** A cost within this much of the smaller size's is flat whatever the ratio. */
  readonly slack?: number;
}

const ok = (cell: Cell) => (cell.ok ? cell.value : null);
const engines = (cell: Cell): ScaleOutFigures | null => ok(cell)?.scaleOut ?? null;
const total = (cell: Cell) => {
  const value = ok(cell);
  const figures = engines(cell);
  return value === null || figures === null ? null : value.cpuMicrosPerAnswer + figures.postgresMicros + figures.redisMicros;
};

function callMeasures(name: string, cellOf: (row: AtSizeRow) => Cell): Measure[] {
  return [
    { label: `${name}: service µs CPU / answer`, value: (row) => ok(cellOf(row))?.cpuMicrosPerAnswer ?? null, format: micros, better: 'lower', slack: FLAT_MICROS },
    { label: `${name}: PostgreSQL backends µs / answer`, value: (row) => engines(cellOf(row))?.postgresMicros ?? null, format: micros, better: 'lower', slack: FLAT_MICROS },
    { label: `${name}: redis-server µs / answer`, value: (row) => engines(cellOf(row))?.redisMicros ?? null, format: micros, better: 'lower', slack: FLAT_MICROS },
    { label: `${name}: total µs / answer`, value: (row) => total(cellOf(row)), format: micros, better: 'lower', slack: FLAT_MICROS },
    { label: `${name}: req/s`, value: (row) => ok(cellOf(row))?.requestsPerSecond ?? null, format: count, better: 'higher' },
    { label: `${name}: p99 ms`, value: (row) => ok(cellOf(row))?.p99Ms ?? null, format: ms, better: null },
  ];
}

export function measures(results: AtSizeResults): Measure[] {
  const rounds = results.settings.rounds;
  return [
    { label: `start-up: spawn to first 200 on GET /hello, median of ${results.settings.starts} (ms)`, value: medianStart, format: (v) => String(Math.round(v)), better: 'lower' },
    { label: 'peak resident memory of the service (VmHWM, MB)', value: (row) => row.peakRssMB, format: (v) => megabytes(v), better: 'lower' },
    ...callMeasures('`GET /user` one hot key', (row) => row.hot),
    ...callMeasures('`GET /user` keys spread over the table', (row) => row.spread),
    { label: 'spread: accounts with real keys it cycles through', value: (row) => row.spreadKeys, format: count, better: null },
    {
      label: 'spread: answers per sampled key in one run',
      value: (row) => (ok(row.spread) === null ? null : ok(row.spread)!.responses / rounds / row.spreadKeys),
      format: (v) => v.toFixed(2),
      better: null,
    },
    { label: 'grown to this size in (s: rows, VACUUM ANALYZE, CHECKPOINT)', value: (row) => row.seedingSeconds, format: (v) => v.toFixed(1), better: null },
    { label: 'load average (1 min) when this size was measured', value: (row) => row.loadAverage, format: (v) => v.toFixed(1), better: null },
  ];
}

function verdictOf(measure: Measure, top: number | null, bottom: number | null): string {
  if (measure.better === null) return '';
  if (top === null || bottom === null || bottom === 0) return 'n/a';
  const ratio = top / bottom;
  const flat = measure.better === 'lower' ? ratio <= FLAT || top - bottom <= (measure.slack ?? 0) : ratio >= 1 / FLAT;
  return flat ? 'flat' : measure.better === 'lower' ? 'grows' : 'falls';
}

export function renderAtSize(results: AtSizeResults): string {
  const notes = new Footnotes();
  const rows = results.rows;
  const first = rows[0]!;
  const last = rows.at(-1)!;
  const previous = rows.length > 2 ? rows.at(-2)! : null;
  const size = (row: AtSizeRow) => count(row.accounts);
  const pairs = [[last, first], ...(previous === null ? [] : [[last, previous]])] as const;
  const header = [
    'measure',
    ...rows.map((row) => `${size(row)} accounts`),
    ...pairs.flatMap(([top, bottom]) => [`${size(top)} / ${size(bottom)}`, 'flat?']),
  ];
  const ratio = (measure: Measure, a: AtSizeRow, b: AtSizeRow) => {
    const [top, bottom] = [measure.value(a), measure.value(b)];
    return top === null || bottom === null || bottom === 0 ? null : top / bottom;
  };
  const body = measures(results).map((measure) => [
    measure.label,
    ...rows.map((row) => {
      const value = measure.value(row);
      return value === null ? 'n/a' : measure.format(value);
    }),
    ...pairs.flatMap(([top, bottom]) => {
      return measure.better === null ? ['', ''] : [times(ratio(measure, top, bottom)), verdictOf(measure, measure.value(top), measure.value(bottom))];
    }),
  ]);
  const wrong = rows.flatMap((row) =>
    [row.hot, row.spread].flatMap((cell) => (cell.ok ? [] : [`${size(row)} accounts: ${notes.mark(cell)}`])),
  );
  const { settings } = results;
  const lines = [
    '# The bench at size: the service on PostgreSQL + Redis over 10^3 to 10^7 accounts',
    '',
    `Written by \`${results.command}\`${results.smoke ? ' (a smoke run: its figures mean nothing)' : ''}; see [../README.md](../README.md#the-bench-at-size---at-size).`,
    '',
    table(['', ''], machineRows(results.machine), ['l', 'l']),
    '',
    'One PostgreSQL database, grown in steps: at each size the seeded accounts (each Premium with one key) are made by ' +
      'PostgreSQL, those of a sample drawn uniformly from all the accounts of that size with real keys (drawn before any row is ' +
      'written, so their rows lie where their ids put them), the database is vacuumed, analysed and checkpointed, and then ' +
      `the service (lean settings, \`DATABASE_URL\` on that database, \`REDIS_URL\` on a redis-server of the bench's own, flushed ` +
      `between sizes) is started ${settings.starts} time${settings.starts === 1 ? '' : 's'} for the start-up figure, then once for the load runs: \`GET /user\` with the ` +
      "bench account's one key, and with the sampled keys in turn (a different account each request, drawn from the whole table, " +
      `so that at 10^7 the reads really go through a 10^7-row table and its indexes). wrk: ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s measured, ${settings.rounds} round(s), each figure the median. ` +
      'CPU per answer counts the service (every thread), every process connected to the bench database (its backends) and the ' +
      "redis-server, as table 3 of results.md does. Peak memory is the service's VmHWM over its load runs.",
    '',
    `**Flat** means the larger size costs at most ${FLAT}× the smaller, or at most ${FLAT_MICROS} µs more per answer (a figure of tenths of a µs ` +
      `doubles with one stray scheduler tick); requests per second: at least ${(1 / FLAT).toFixed(2)}× of it. ` +
      `the first verdict compares the largest size with the smallest${previous === null ? '' : ', the second with the size before it'}. ` +
      'The sizes are measured one after another, minutes apart, on a shared machine: the load average of each is in the table, ' +
      'and a difference that follows it is the machine, not the size. With fewer accounts than the credential cache holds ' +
      '(CREDENTIAL_CACHE_SIZE, 10,000) and a run that uses every key many times (the "answers per sampled key" row), the spread ' +
      "run at the smallest size reads mostly from the cache; from 10^6 each key is used about once a run, so every read misses it: " +
      `the smallest size is the cheaper case for the spread rows${previous === null ? '' : `, and the ${size(last)} / ${size(previous)} columns compare two sizes where every read misses: whether a cold read grows with the table`}.`,
    '',
    table(header, body, ['l', ...rows.map(() => 'r' as const), ...pairs.flatMap(() => ['r', 'l'] as const)]),
    ...(wrong.length === 0 ? [] : ['', ...wrong, '', notes.render()]),
    '',
  ];
  return lines.join('\n');
}
