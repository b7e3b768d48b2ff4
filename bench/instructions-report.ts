// Turns `--instructions`' counts into bench/instructions.md: instructions per answer of every server, authentication's own
// count, the targets, and every pair's figure so the spread is there to see.
import type { CallId } from './calls.ts';
import type { InstructionResults, PairCount, ServerCount } from './instructions.ts';
import { count, machineRows, table, times, verdict } from './markdown.ts';
import type { InstructionServer } from './options.ts';
import { median } from './measurement.ts';
import type { TargetRow } from './targets.ts';

/** Ceiling over service, main thread, at least (GET /hello and GET /user). */
export const INSTRUCTIONS_OF_CEILING_TARGET = 0.75;
const TARGET_CALLS: readonly CallId[] = ['hello', 'user'];

const NAMES: Record<InstructionServer, string> = { service: 'service', ceiling: 'ceiling', fastify: 'Fastify', express: 'Express' };
type Thread = keyof PairCount;

function figure(server: ServerCount | undefined, call: CallId, thread: Thread): number | null {
  const pairs = server?.pairs.get(call) ?? [];
  return server === undefined || server.problem !== null || pairs.length === 0 ? null : median(pairs.map((pair) => pair[thread]));
}

/** (max - min) / median over the pairs, as a percentage; null with fewer than two. */
function spread(server: ServerCount, call: CallId, thread: Thread): number | null {
  const values = (server.pairs.get(call) ?? []).map((pair) => pair[thread]);
  if (values.length < 2) return null;
  return ((Math.max(...values) - Math.min(...values)) / median(values)) * 100;
}

const over = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);
const shown = (value: number | null) => (value === null ? 'n/a' : count(value));

function countTable(results: InstructionResults, thread: Thread): string {
  const servers = results.servers;
  const find = (name: InstructionServer) => servers.find((server) => server.server === name);
  const rows = results.calls.map((call) => {
    const service = figure(find('service'), call.id, thread);
    return [
      `\`${call.label}\``,
      ...servers.map((server) => {
        const value = figure(server, call.id, thread);
        const range = spread(server, call.id, thread);
        return value === null ? 'n/a' : `${count(value)}${range === null ? '' : ` ±${(range / 2).toFixed(1)} %`}`;
      }),
      times(over(figure(find('ceiling'), call.id, thread), service)),
      times(over(figure(find('fastify'), call.id, thread), service)),
      times(over(figure(find('express'), call.id, thread), service)),
    ];
  });
  return table(
    ['endpoint', ...servers.map((server) => NAMES[server.server]), 'ceiling / service', 'Fastify / service', 'Express / service'],
    rows,
    ['l', ...servers.map(() => 'r' as const), 'r', 'r', 'r'],
  );
}

function authenticationTable(results: InstructionResults): string | null {
  if (!results.calls.some((call) => call.id === 'hello') || !results.calls.some((call) => call.id === 'hello-auth')) return null;
  const rows = results.servers.map((server) => {
    const cost = (thread: Thread) => {
      const [withCredentials, without] = [figure(server, 'hello-auth', thread), figure(server, 'hello', thread)];
      return withCredentials === null || without === null ? 'n/a' : count(withCredentials - without);
    };
    return [NAMES[server.server], cost('mainThread'), cost('allThreads')];
  });
  return table(['server', 'main thread', 'all threads'], rows, ['l', 'r', 'r']);
}

export function instructionTargets(results: InstructionResults): TargetRow[] {
  const find = (name: InstructionServer) => results.servers.find((server) => server.server === name);
  return results.calls
    .filter((call) => TARGET_CALLS.includes(call.id))
    .flatMap((call) => {
      const [service, ceiling, fastify] = [figure(find('service'), call.id, 'mainThread'), figure(find('ceiling'), call.id, 'mainThread'), figure(find('fastify'), call.id, 'mainThread')];
      const ofCeiling = over(ceiling, service);
      return [
        {
          measure: `instructions per answer, \`${call.label}\`, main thread: ceiling / service`,
          measured: `${times(ofCeiling)} (ceiling ${shown(ceiling)}, service ${shown(service)})`,
          target: `≥ ${INSTRUCTIONS_OF_CEILING_TARGET.toFixed(2)}`,
          met: ofCeiling === null ? null : ofCeiling >= INSTRUCTIONS_OF_CEILING_TARGET,
        },
        {
          measure: `instructions per answer, \`${call.label}\`, main thread: service against plain Fastify`,
          measured: `service ${shown(service)}, Fastify ${shown(fastify)}`,
          target: 'no more than Fastify',
          met: service === null || fastify === null ? null : service <= fastify,
        },
      ];
    });
}

function pairsTable(results: InstructionResults): string {
  const rows = results.servers.flatMap((server) =>
    results.calls.map((call) => [
      NAMES[server.server],
      `\`${call.label}\``,
      (server.pairs.get(call.id) ?? []).map((pair) => count(pair.mainThread)).join(', ') || 'n/a',
      (server.pairs.get(call.id) ?? []).map((pair) => count(pair.allThreads)).join(', ') || 'n/a',
    ]),
  );
  return table(['server', 'endpoint', 'main thread, each pair', 'all threads, each pair'], rows, ['l', 'l', 'r', 'r']);
}

export function renderInstructions(results: InstructionResults): string {
  const { options } = results;
  const targets = instructionTargets(results);
  const authentication = authenticationTable(results);
  const problems = results.servers.filter((server) => server.problem !== null).map((server) => `- ${server.problem}`);
  const method =
    `callgrind (\`valgrind --tool=callgrind --trace-children=no --separate-threads=yes\`) on the server's own process; after ` +
    `${count(options.warmupRequests)} uncounted warm-up requests of each call, pairs of ${count(options.requests)} and ` +
    `${count(3 * options.requests)} requests, one at a time on one keep-alive connection, each between \`callgrind_control --zero\` ` +
    `and \`--dump\`; per answer = (3N count - N count) / 2N, the median of ${options.repeats} pair(s)` +
    (results.smoke ? ' (smoke: numbers too small to mean anything)' : '');
  const sections = [
    '# account-api: instructions per answer',
    `Written by \`${results.command}\` (see [README.md](README.md#instructions-per-answer)). Instructions do not move with the ` +
      "machine's other load as CPU time does: this is the figure to compare when a change is small. The CPU time, requests per " +
      'second and latency are in [results.md](results.md).',
    table(
      ['', ''],
      [
        ...machineRows(results.machine),
        ['valgrind', results.valgrind],
        ['method', method],
        ['time', results.servers.map((server) => `${NAMES[server.server]} ${Math.round(server.seconds)} s`).join(', ')],
      ],
      ['l', 'l'],
    ),
    '## Targets',
    'On the main thread (the event loop that answers): its count varies far less from pair to pair than the sum over all ' +
      'threads (both are below, with their spread).',
    table(['measure', 'measured', 'target', ''], targets.map((row) => [row.measure, row.measured, row.target, verdict(row.met)]), ['l', 'r', 'l', 'l']),
    '## Instructions per answer, main thread',
    'Median over the pairs; ± is half the range between the highest and lowest pair, as a share of the median.',
    countTable(results, 'mainThread'),
    '## Instructions per answer, all threads',
    "The same with V8's background threads (optimising compiler, concurrent marking) and libuv's pool. Valgrind runs one " +
      'thread at a time, so how much background work lands in a phase varies much more than on the main thread.',
    countTable(results, 'allThreads'),
    ...(authentication === null ? [] : ["## Authentication's own count", 'Instructions per answer of `GET /hello` with valid credentials minus without:', authentication]),
    '## Every pair',
    pairsTable(results),
  ];
  if (problems.length > 0) sections.push('## Servers without figures', problems.join('\n'));
  return `${sections.join('\n\n')}\n`;
}
