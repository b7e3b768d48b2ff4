// Turns the bench's results into bench/results.md: the machine, table 1 (endpoints side by side), table 2 (scaling and targets).
import { median, ratio, type BenchResults, type Cell, type EndpointRow } from './results.ts';

const P99_TARGET_MS = 5;
const P99_TARGET_CONNECTIONS = 64;
const MEMORY_TARGET_MB = 150;
const START_TARGET_MS = 400;
const SCALE_TARGET = 0.9;

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
const times = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(2)}×`);
const verdict = (met: boolean | null) => (met === null ? 'n/a' : met ? 'met' : 'not met');

/** Problems found while verifying, numbered for footnotes. */
class Footnotes {
  readonly #notes: string[] = [];
  mark(cell: Cell): string {
    if (cell.ok) return '';
    this.#notes.push(cell.problem.replaceAll('\n', ' '));
    return `✗ wrong answer [${this.#notes.length}]`;
  }
  render(): string {
    return this.#notes.map((note, index) => `[${index + 1}] ${note}`).join('\n\n');
  }
}

function measured(cell: Cell, notes: Footnotes): string[] {
  return cell.ok ? [count(cell.value.requestsPerSecond), ms(cell.value.p50Ms), ms(cell.value.p99Ms)] : [notes.mark(cell), '', ''];
}

function endpointVerdict(row: EndpointRow): boolean | null {
  const checks: (boolean | null)[] = [];
  const { ofCeiling, ofExpress } = row.call.target;
  if (ofCeiling !== null) checks.push(ratioAtLeast(ratio(row.service, row.ceiling), ofCeiling));
  if (ofExpress !== null) checks.push(ratioAtLeast(ratio(row.service, row.express), ofExpress));
  if (checks.length === 0 || checks.includes(null)) return null;
  return checks.every(Boolean);
}

function ratioAtLeast(value: number | null, target: number): boolean | null {
  return value === null ? null : value >= target;
}

function table(header: readonly string[], rows: readonly (readonly string[])[], align: readonly ('l' | 'r')[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align.map((side) => (side === 'r' ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

function endpointTable(results: BenchResults, notes: Footnotes): string {
  const rows = results.endpoints.map((row) => [
    `\`${row.call.label}\``,
    ...measured(row.service, notes),
    ...measured(row.ceiling, notes),
    ...measured(row.express, notes),
    times(ratio(row.service, row.ceiling)),
    times(ratio(row.service, row.express)),
    row.call.target.text,
    row.call.target.ofCeiling === null && row.call.target.ofExpress === null ? '—' : verdict(endpointVerdict(row)),
  ]);
  const header = ['endpoint', 'service req/s', 'p50 ms', 'p99 ms', 'ceiling req/s', 'p50 ms', 'p99 ms', 'Express req/s', 'p50 ms', 'p99 ms'];
  return table(
    [...header, 'service / ceiling', 'service / Express', 'target', ''],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
  );
}

function inMemoryWrites(results: BenchResults, notes: Footnotes): string {
  const rows = results.endpoints
    .filter((row) => row.memoryCeiling !== null)
    .map((row) => [`\`${row.call.label}\``, ...measured(row.memoryCeiling!, notes), times(ratio(row.service, row.memoryCeiling!))]);
  return table(['endpoint', 'in-memory ceiling req/s', 'p50 ms', 'p99 ms', 'service / in-memory ceiling'], rows, ['l', 'r', 'r', 'r', 'r']);
}

function scaleTable(results: BenchResults, notes: Footnotes): string {
  const connections = results.settings.scaleConnections;
  const rows = results.scaling.map((row) => [
    count(row.accounts),
    ...connections.map((c) => {
      const cell = row.cells.get(c);
      if (cell === undefined) return '';
      return cell.ok ? `${count(cell.value.requestsPerSecond)} · ${ms(cell.value.p50Ms)} / ${ms(cell.value.p99Ms)}` : notes.mark(cell);
    }),
    row.peakRssMB === null ? 'n/a' : row.peakRssMB.toFixed(1),
  ]);
  const smallest = results.scaling[0];
  const largest = results.scaling.at(-1);
  if (smallest !== undefined && largest !== undefined && largest !== smallest) {
    rows.push([
      `${count(largest.accounts)} / ${count(smallest.accounts)}`,
      ...connections.map((c) => {
        const [big, small] = [largest.cells.get(c), smallest.cells.get(c)];
        return big === undefined || small === undefined ? '' : times(ratio(big, small));
      }),
      '',
    ]);
  }
  return table(
    ['accounts', ...connections.map((c) => `${c} connection${c === 1 ? '' : 's'}: req/s · p50 / p99 ms`), 'peak RSS MB'],
    rows,
    ['l', ...connections.map(() => 'r' as const), 'r'],
  );
}

function targetTable(results: BenchResults): string {
  const rows: string[][] = [];
  const { connections } = results.settings;
  const atTargetLoad = connections === P99_TARGET_CONNECTIONS;
  for (const row of results.endpoints) {
    const p99 = row.service.ok ? row.service.value.p99Ms : null;
    // At saturation p99 is mostly queueing: the ceiling's own p99 under the same load says what is reachable here.
    const ceiling = row.ceiling.ok ? ` (ceiling ${ms(row.ceiling.value.p99Ms)} ms)` : '';
    rows.push([
      `p99 latency at ${connections} connections, \`${row.call.label}\``,
      p99 === null ? 'n/a' : `${ms(p99)} ms${ceiling}`,
      `< ${P99_TARGET_MS} ms at ${P99_TARGET_CONNECTIONS}`,
      atTargetLoad ? verdict(p99 === null ? null : p99 < P99_TARGET_MS) : 'n/a (other load)',
    ]);
  }
  const smallest = results.scaling[0];
  const largest = results.scaling.at(-1);
  if (smallest !== undefined && largest !== undefined && largest !== smallest) {
    const column = results.settings.scaleConnections.includes(P99_TARGET_CONNECTIONS) ? P99_TARGET_CONNECTIONS : connections;
    const [big, small] = [largest.cells.get(column), smallest.cells.get(column)];
    const value = big === undefined || small === undefined ? null : ratio(big, small);
    rows.push([
      `\`GET /user\` with ${count(largest.accounts)} accounts against ${count(smallest.accounts)}, ${column} connections`,
      times(value),
      `≥ ${SCALE_TARGET.toFixed(2)}`,
      verdict(ratioAtLeast(value, SCALE_TARGET)),
    ]);
  }
  if (largest !== undefined) {
    const peak = largest.peakRssMB;
    rows.push([
      `peak resident memory (VmHWM) of the service, ${count(largest.accounts)}-account run`,
      peak === null ? 'n/a' : `${peak.toFixed(1)} MB`,
      `< ${MEMORY_TARGET_MB} MB`,
      verdict(peak === null ? null : peak < MEMORY_TARGET_MB),
    ]);
  }
  for (const start of results.startTimes) {
    const value = median(start.samplesMs);
    rows.push([
      `start to first answered request (spawn to 200 on \`GET /hello\`), SQLite with ${count(start.accounts)} accounts, median of ${start.samplesMs.length}`,
      `${Math.round(value)} ms (${start.samplesMs.map((sample) => Math.round(sample)).join(', ')})`,
      `< ${START_TARGET_MS} ms`,
      verdict(value < START_TARGET_MS),
    ]);
  }
  return table(['measure', 'measured', 'target', ''], rows, ['l', 'r', 'l', 'l']);
}

function loadAverage(machine: BenchResults['machine']): string {
  const end = machine.loadAverageAtEnd;
  const figures = `${machine.loadAverage.toFixed(1)} at the start, ${end === null ? 'n/a' : end.toFixed(1)} at the end (1 minute)`;
  const busy = Math.max(machine.loadAverage, end ?? 0) > machine.cores / 2;
  return busy ? `${figures}: other work was running, so figures are noisier than usual` : figures;
}

export function renderMarkdown(results: BenchResults, chartFile: string): string {
  const { machine, settings } = results;
  const notes = new Footnotes();
  const load =
    settings.amount === null
      ? `${settings.durationSeconds} s per run after a ${settings.warmupSeconds} s warm-up`
      : `${settings.amount} requests per run (smoke: numbers too small to mean anything)`;
  const turns =
    settings.rounds > 1
      ? `; servers measured in turn, each figure the median of ${settings.rounds} rounds`
      : '; servers measured in turn, endpoint by endpoint';
  const sections = [
    '# account-api benchmark results',
    `Written by \`${settings.command}\` (see [README.md](README.md) for what is measured and how to read it). Ratios are what we track: ` +
      'the machine is shared and noisy, so absolute numbers move between runs.',
    table(
      ['', ''],
      [
        ['date', machine.date],
        ['CPU', `${machine.cpu}, ${machine.cores} cores (nproc)`],
        ['memory', `${machine.memoryGiB.toFixed(1)} GiB`],
        ['Node', machine.node],
        ['OS', machine.kernel],
        ['load average', loadAverage(machine)],
        ['service', `commit ${machine.commit}`],
        ['load', `autocannon in the bench process on the same machine, pipelining 1, ${load}${turns}`],
      ],
      ['l', 'l'],
    ),
    `![Requests per second for each endpoint: service, ceiling and Express](${chartFile})`,
    `## Table 1: every endpoint, side by side (${settings.connections} connections)`,
    'Latency in milliseconds. The ceiling of the two POSTs writes the row with node:sqlite (WAL, synchronous=FULL) before it answers.',
    endpointTable(results, notes),
    'The same POSTs against the ceiling that keeps the write in memory (no target; how much of the cost is the disk):',
    inMemoryWrites(results, notes),
    `Peak resident memory (VmHWM) of each server over table 1: ${[...results.endpointPeakRssMB]
      .map(([name, mb]) => `${name} ${mb === null ? 'n/a' : `${mb.toFixed(1)} MB`}`)
      .join(', ')}.`,
    '## Table 2: scaling, latency, memory and start-up',
    `\`GET /user\` on the service, by accounts in the database and connections (each cell: req/s · p50 / p99 ms):`,
    scaleTable(results, notes),
    'The targets that are not ratios to a peer:',
    targetTable(results),
  ];
  const footnotes = notes.render();
  if (footnotes !== '') sections.push('## Wrong answers', footnotes);
  return `${sections.join('\n\n')}\n`;
}
