// Turns the bench's results into bench/results.md: the machine, the targets, table 1 (every endpoint on every server: CPU per
// answer, requests per second, latency), authentication's cost, the defaults, table 2 (scaling, memory, start-up) and table 3
// (the service on PostgreSQL + Redis beside SQLite).
import { count, Footnotes, machineRows, megabytes, micros, ms, table, times, verdict } from './markdown.ts';
import { cpuRatio, PEERS, ratio, type BenchResults, type Cell, type EndpointRow } from './results.ts';
import { scaleOutSection } from './scale-out-report.ts';
import { authenticationCost, cpuVerdict, scaleOutTargets, tableOneTargets, tableTwoTargets, throughputVerdict, type TargetRow } from './targets.ts';

const label = (row: EndpointRow) => `\`${row.call.label}\``;

function targetTable(rows: readonly TargetRow[]): string {
  return table(
    ['measure', 'measured', 'target', ''],
    rows.map((row) => [row.measure, row.measured, row.target, verdict(row.met)]),
    ['l', 'r', 'l', 'l'],
  );
}

function figure(cell: Cell, notes: Footnotes, value: (cell: Extract<Cell, { ok: true }>) => string): string {
  return cell.ok ? value(cell) : notes.mark(cell);
}

function cpuTable(results: BenchResults, notes: Footnotes): string {
  const rows = results.endpoints.map((row) => [
    label(row),
    ...PEERS.map((peer) => figure(row[peer.key], notes, (cell) => micros(cell.value.cpuMicrosPerAnswer))),
    times(cpuRatio(row.ceiling, row.service)),
    times(cpuRatio(row.fastify, row.service)),
    times(cpuRatio(row.express, row.service)),
    row.call.cpuTarget?.text ?? '—',
    row.call.cpuTarget === null ? '—' : verdict(cpuVerdict(row)),
  ]);
  return table(
    ['endpoint', ...PEERS.map((peer) => `${peer.label} µs`), 'ceiling / service', 'Fastify / service', 'Express / service', 'target', ''],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
  );
}

function throughputTable(results: BenchResults, notes: Footnotes): string {
  const rows = results.endpoints.map((row) => [
    label(row),
    ...PEERS.map((peer) => figure(row[peer.key], notes, (cell) => count(cell.value.requestsPerSecond))),
    times(ratio(row.service, row.ceiling)),
    times(ratio(row.service, row.fastify)),
    times(ratio(row.service, row.express)),
    row.call.target.text,
    verdict(throughputVerdict(row)),
  ]);
  return table(
    ['endpoint', ...PEERS.map((peer) => `${peer.label} req/s`), 'service / ceiling', 'service / Fastify', 'service / Express', 'target', ''],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
  );
}

function latencyTable(results: BenchResults, notes: Footnotes): string {
  const rows = results.endpoints.map((row) => [
    label(row),
    ...PEERS.map((peer) => figure(row[peer.key], notes, (cell) => `${ms(cell.value.p50Ms)} / ${ms(cell.value.p99Ms)}`)),
  ]);
  return table(['endpoint', ...PEERS.map((peer) => `${peer.label} p50 / p99 ms`)], rows, ['l', 'r', 'r', 'r', 'r']);
}

function kernelShareTable(results: BenchResults): string {
  const share = (cell: Cell) => (cell.ok && cell.value.systemShare !== null ? `${Math.round(cell.value.systemShare * 100)} %` : 'n/a');
  const rows = results.endpoints.map((row) => [label(row), ...PEERS.map((peer) => share(row[peer.key]))]);
  return table(['endpoint', ...PEERS.map((peer) => peer.label)], rows, ['l', 'r', 'r', 'r', 'r']);
}

/** Where each server's resident megabytes were at the end of table 1, beside its peak. */
function memoryTable(results: BenchResults): string {
  const rows = [...results.endpointPeakRssMB].map(([name, peak]) => {
    const kinds = results.endpointMemory.get(name);
    return [name, ...[peak, kinds?.otherAnonymousMB, kinds?.mallocMainMB, kinds?.mallocArenasMB, kinds?.filesMB].map(megabytes)];
  });
  return table(
    ['server', 'peak (VmHWM)', "other anonymous: V8's heap, stacks", 'malloc: main heap', "malloc: other threads' arenas", "files: Node's binary, libraries"],
    rows,
    ['l', 'r', 'r', 'r', 'r', 'r'],
  );
}

function authenticationTable(results: BenchResults): string | null {
  const hello = results.endpoints.find((row) => row.call.id === 'hello');
  const helloAuth = results.endpoints.find((row) => row.call.id === 'hello-auth');
  if (hello === undefined || helloAuth === undefined) return null;
  const rows = PEERS.map((peer) => {
    const [without, withCredentials] = [hello[peer.key], helloAuth[peer.key]];
    const cost = authenticationCost(withCredentials, without);
    return [
      peer.label,
      without.ok ? micros(without.value.cpuMicrosPerAnswer) : 'n/a',
      withCredentials.ok ? micros(withCredentials.value.cpuMicrosPerAnswer) : 'n/a',
      cost === null ? 'n/a' : cost.toFixed(1),
    ];
  });
  return table(['server', '`GET /hello` µs', 'with valid credentials µs', 'authentication µs'], rows, ['l', 'r', 'r', 'r']);
}

function defaultsTable(results: BenchResults, notes: Footnotes): string | null {
  const row = results.defaultSettings;
  if (row === null) return null;
  const line = (name: string, cell: Cell) =>
    cell.ok
      ? [name, micros(cell.value.cpuMicrosPerAnswer), count(cell.value.requestsPerSecond), ms(cell.value.p50Ms), ms(cell.value.p99Ms)]
      : [name, notes.mark(cell), '', '', ''];
  return table(
    ['service settings', 'CPU µs per answer', 'req/s', 'p50 ms', 'p99 ms'],
    [line('lean (the bench\'s)', row.lean), line('defaults', row.defaults), ['lean / defaults', times(cpuRatio(row.lean, row.defaults)), times(ratio(row.defaults, row.lean)), '', '']],
    ['l', 'r', 'r', 'r', 'r'],
  );
}

function inMemoryWrites(results: BenchResults, notes: Footnotes): string {
  const rows = results.endpoints
    .filter((row) => row.memoryCeiling !== null)
    .map((row) => [
      label(row),
      figure(row.memoryCeiling!, notes, (cell) => count(cell.value.requestsPerSecond)),
      figure(row.memoryCeiling!, notes, (cell) => micros(cell.value.cpuMicrosPerAnswer)),
      times(ratio(row.service, row.memoryCeiling!)),
    ]);
  return table(['endpoint', 'in-memory ceiling req/s', 'CPU µs', 'service / in-memory ceiling req/s'], rows, ['l', 'r', 'r', 'r']);
}

function scaleTable(results: BenchResults, notes: Footnotes): string {
  const connections = results.settings.scaleConnections;
  const rows = results.scaling.map((row) => [
    count(row.accounts),
    ...connections.map((c) => {
      const cell = row.cells.get(c);
      if (cell === undefined) return '';
      return cell.ok
        ? `${count(cell.value.requestsPerSecond)} · ${micros(cell.value.cpuMicrosPerAnswer)} µs · ${ms(cell.value.p50Ms)} / ${ms(cell.value.p99Ms)}`
        : notes.mark(cell);
    }),
    megabytes(row.peakRssMB),
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
    ['accounts', ...connections.map((c) => `${c} connection${c === 1 ? '' : 's'}: req/s · CPU · p50 / p99 ms`), 'peak RSS MB'],
    rows,
    ['l', ...connections.map(() => 'r' as const), 'r'],
  );
}

/** What the measurements were taken with, and how far the load generator and the CPU readings can be trusted. */
function methodRows(results: BenchResults): string[][] {
  const { settings } = results;
  const cells = [...results.endpoints.flatMap((row) => [row.service, row.ceiling, row.fastify, row.express, ...(row.memoryCeiling === null ? [] : [row.memoryCeiling])]), ...(results.defaultSettings === null ? [] : [results.defaultSettings.defaults]), ...results.scaling.flatMap((row) => [...row.cells.values()])];
  const measured = cells.flatMap((cell) => (cell.ok ? [cell.value] : []));
  const fellBack = measured.filter((value) => value.cpuSource === 'stat').length;
  const wrk = Math.max(0, ...measured.map((value) => value.loadGeneratorCores));
  const server = Math.max(0, ...measured.map((value) => value.serverCores));
  const load = settings.smoke
    ? `${settings.durationSeconds} s per run (smoke: numbers too small to mean anything)`
    : `${settings.durationSeconds} s per run after a ${settings.warmupSeconds} s warm-up`;
  const turns = settings.rounds > 1 ? `, servers measured in turn, each figure the median of ${settings.rounds} interleaved rounds` : ', servers measured in turn, endpoint by endpoint';
  return [
    ['load', `wrk -t${settings.loadThreads} -c${settings.connections} on the same machine, ${load}${turns}`],
    [
      'CPU time',
      `the server's threads' time on CPU (/proc/PID/task/*/schedstat, ns; workers included) before and after each run, over the answers wrk counted` +
        (fellBack === 0 ? '' : `; ${fellBack} figure(s) fell back to /proc/PID/stat's utime + stime (a thread ended mid-run)`),
    ],
    ['load generator', `wrk used at most ${wrk.toFixed(2)} of a core in any measured run; the server under test at most ${server.toFixed(2)} cores`],
  ];
}

export function renderMarkdown(results: BenchResults, chartFile: string): string {
  const { machine, settings } = results;
  const notes = new Footnotes();
  const authentication = authenticationTable(results);
  const defaults = defaultsTable(results, notes);
  const sections = [
    '# account-api benchmark results',
    `Written by \`${settings.command}\` (see [README.md](README.md) for what is measured and how to read it). Ratios are what we track: ` +
      'the machine is shared and noisy, so absolute numbers move between runs. Instructions per answer, the figure for changes ' +
      'too small for these to show, are in [instructions.md](instructions.md) (`npm run bench -- --instructions`).',
    table(['', ''], [...machineRows(machine), ...methodRows(results)], ['l', 'l']),
    `![Server CPU time per answer for each endpoint: service, ceiling, Fastify and Express](${chartFile})`,
    '## Targets',
    'Each judged from figures of this run only. For CPU per answer, `ceiling / service` is the ceiling\'s CPU time per answer ' +
      'over the service\'s: 1 would be as cheap as the least work that gives the same answers.',
    targetTable([...tableOneTargets(results), ...scaleOutTargets(results)]),
    `## Table 1: CPU time per answer (${settings.connections} connections)`,
    'Microseconds of the server\'s CPU time (user + system, every thread) per answer; lower is better. The ceiling of the two ' +
      'POSTs writes the row with node:sqlite (WAL, synchronous=FULL) before it answers.',
    cpuTable(results, notes),
    `### Requests per second (${settings.connections} connections)`,
    throughputTable(results, notes),
    '### Latency',
    'Milliseconds, measured by wrk per answer; at saturation mostly the wait behind other requests on the same connection.',
    latencyTable(results, notes),
    ...(authentication === null ? [] : ["### Authentication's own cost", 'CPU per answer of `GET /hello` without credentials and with valid ones, on each server:', authentication]),
    ...(defaults === null
      ? []
      : [`### The service at its default settings against the bench's lean ones, \`GET /user\``, `Defaults: ${results.defaultSettings!.description}. Lean: LOG_LEVEL=warn, MAX_EVENT_LOOP_DELAY_MS=0, no metrics listener.`, defaults]),
    '### Writes against the in-memory ceiling',
    'The same POSTs against the ceiling that keeps the write in memory (no target; how much of the cost is the disk):',
    inMemoryWrites(results, notes),
    '### Kernel share of the CPU time',
    "Of each server's CPU time, the share spent in the kernel (sockets, mostly), from /proc/PID/stat's user and system ticks:",
    kernelShareTable(results),
    '### Resident memory',
    "Each server's peak resident memory over table 1 (VmHWM, with any workers it forked), and where its main process's resident " +
      'megabytes were when table 1 ended, from /proc/PID/smaps (MB; docs/operations.md, Performance and memory, reads them):',
    memoryTable(results),
    '## Table 2: scaling, latency, memory and start-up',
    '`GET /user` on the service (lean settings), by accounts in the database and connections (each cell: req/s · CPU µs per answer · p50 / p99 ms):',
    scaleTable(results, notes),
    'The earlier targets that are not ratios to a peer:',
    targetTable(tableTwoTargets(results)),
    ...scaleOutSection(results, notes),
  ];
  const footnotes = notes.render();
  if (footnotes !== '') sections.push('## Wrong answers', footnotes);
  return `${sections.join('\n\n')}\n`;
}
