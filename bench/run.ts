// `npm run bench`: the service, the ceiling and the Express peer under the same load, endpoint by endpoint; writes results.md and results.svg.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_CALLS, type BenchAccounts, type BenchCall, type CallId } from './calls.ts';
import { renderChart } from './chart.ts';
import { templateFrom, type HeaderTemplates } from './header-templates.ts';
import { measure, verify, type LoadSettings, type Measurement } from './load.ts';
import { parseOptions, type BenchOptions } from './options.ts';
import { freePort, residentMemory, SERVICE_MAIN, startServer, timeToFirstAnswer, type ServerProcess } from './processes.ts';
import { renderMarkdown } from './report.ts';
import { describeMachine, median, type BenchResults, type Cell, type EndpointRow, type ScaleRow, type StartTimes } from './results.ts';
import { copyDatabase, createBenchDatabase, growAccounts } from './seed.ts';

const CEILING = join(import.meta.dirname, 'ceiling-server.ts');
const EXPRESS = join(import.meta.dirname, 'express-peer.ts');
const BUDGET = '1000000000';

const log = (line: string) => process.stderr.write(`${line}\n`);
const running = new Set<ServerProcess>();

async function start(name: string, script: string, args: readonly string[], env: NodeJS.ProcessEnv, nodeArgs: readonly string[] = []): Promise<ServerProcess> {
  const server = await startServer(name, script, args, env, nodeArgs);
  running.add(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  running.delete(server);
  await server.stop();
}

function describe(cell: Cell): string {
  if (!cell.ok) return `WRONG: ${cell.problem.split('\n')[0]}`;
  const { requestsPerSecond, p50Ms, p99Ms } = cell.value;
  return `${Math.round(requestsPerSecond).toLocaleString('en-US').padStart(7)} req/s  p50 ${p50Ms.toFixed(2)} ms  p99 ${p99Ms.toFixed(2)} ms`;
}

/** The end of what a server wrote, short enough for a table's footnote. */
function lastWords(server: ServerProcess): string {
  return server.output
    .slice(-3)
    .map((line) => (line.length > 200 ? `${line.slice(0, 200)}...` : line))
    .join(' / ');
}

/** Verifies, then measures, one call on one server; a wrong answer is recorded instead of a measurement. */
async function measureOne(job: Job, accounts: BenchAccounts, reference: readonly string[] | null): Promise<Cell> {
  let cell: Cell;
  try {
    cell = { ok: true, value: await measure(await verify(job.server.url, job.call, accounts, reference), job.settings) };
  } catch (error) {
    cell = { ok: false, problem: `${job.server.name}: ${(error as Error).message}` };
  }
  const exit = job.server.exit();
  if (exit !== null) {
    const problem = `${job.server.name} ${exit} during ${job.call.label}; it last wrote: ${lastWords(job.server)}`;
    cell = { ok: false, problem };
  }
  const load = `${job.call.label} @${job.settings.connections}`;
  log(`  ${job.server.name.padEnd(15)} ${load.padEnd(34)} ${describe(cell)}`);
  return cell;
}

/** One measurement to take: a call on a server under a load. */
interface Job {
  readonly key: string;
  /** Jobs compared with each other (one endpoint on every server, or one connection count on every size). */
  readonly group: string;
  readonly server: ServerProcess;
  readonly call: BenchCall;
  readonly settings: LoadSettings;
}

/**
 * The jobs of each group in turn, the group's first job moving one place each round: whoever is measured first (or last)
 * in a group does not stay so, so drift within a group (the machine warming, the bench's own garbage) favours no server.
 */
function inRoundOrder(jobs: readonly Job[], round: number): Job[] {
  const groups = new Map<string, Job[]>();
  for (const job of jobs) groups.set(job.group, [...(groups.get(job.group) ?? []), job]);
  return [...groups.values()].flatMap((members) => {
    const shift = (round - 1) % members.length;
    return [...members.slice(shift), ...members.slice(0, shift)];
  });
}

/**
 * Takes every job in turn, `rounds` times over, so servers compared with each other are measured seconds apart and drift in
 * the machine's other load hits them alike. Each cell is the median of its rounds; one wrong answer makes it wrong.
 */
async function measureInTurn(
  jobs: readonly Job[],
  rounds: number,
  accounts: BenchAccounts,
  references: ReadonlyMap<CallId, readonly string[]>,
): Promise<Map<string, Cell>> {
  const samples = new Map<string, Measurement[]>();
  const problems = new Map<string, string>();
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) log(`  round ${round} of ${rounds}`);
    for (const job of inRoundOrder(jobs, round)) {
      if (problems.has(job.key)) continue;
      const cell = await measureOne(job, accounts, references.get(job.call.id) ?? null);
      if (cell.ok) samples.set(job.key, [...(samples.get(job.key) ?? []), cell.value]);
      else problems.set(job.key, cell.problem);
    }
  }
  const cells = new Map<string, Cell>();
  for (const job of jobs) {
    const problem = problems.get(job.key);
    const taken = samples.get(job.key) ?? [];
    cells.set(
      job.key,
      problem !== undefined
        ? { ok: false, problem }
        : {
            ok: true,
            value: {
              requestsPerSecond: median(taken.map((one) => one.requestsPerSecond)),
              p50Ms: median(taken.map((one) => one.p50Ms)),
              p99Ms: median(taken.map((one) => one.p99Ms)),
              responses: taken.reduce((sum, one) => sum + one.responses, 0),
            },
          },
    );
  }
  return cells;
}

/** What the service answers to each call: the bodies the others must match byte for byte, and its headers for them to copy. */
async function capture(server: ServerProcess, accounts: BenchAccounts) {
  const answers = new Map<CallId, readonly string[]>();
  const templates: HeaderTemplates = {};
  for (const call of BENCH_CALLS) {
    try {
      const plan = await verify(server.url, call, accounts, null);
      answers.set(call.id, plan.answers);
      templates[call.id] = templateFrom(plan.rawHeaders);
    } catch (error) {
      // Measured anyway: the service then fails the same check and its cell says why.
      log(`  the service answers ${call.label} wrongly: ${(error as Error).message}`);
    }
  }
  return { answers, templates };
}

async function startTimes(
  database: string,
  accounts: number,
  options: BenchOptions,
  env: NodeJS.ProcessEnv,
): Promise<StartTimes> {
  const times: number[] = [];
  for (let i = 0; i < options.starts; i++) {
    const port = await freePort();
    const args = ['serve', '--host', '127.0.0.1', '--port', String(port), ...options.serviceArgs];
    times.push(await timeToFirstAnswer(args, port, { ...env, DATABASE_URL: `sqlite:${database}` }, options.serviceNodeArgs));
  }
  log(`  start to first answer with ${accounts.toLocaleString('en-US')} accounts: ${times.map((t) => `${Math.round(t)} ms`).join(', ')}`);
  return { accounts, samplesMs: times };
}

async function run(options: BenchOptions, command: string, work: string): Promise<BenchResults> {
  const machine = describeMachine();
  // A clean environment: nothing of the caller's (DATABASE_URL, REDIS_URL...) leaks into the servers under test.
  const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  const serviceEnv: NodeJS.ProcessEnv = {
    ...baseEnv,
    LOG_LEVEL: 'warn',
    // The bench measures work, not 429s or load shedding.
    RATE_LIMIT_PER_KEY: BUDGET,
    RATE_LIMIT_PER_ADDRESS: BUDGET,
    RATE_LIMIT_AUTH_FAILURES: BUDGET,
    MAX_EVENT_LOOP_DELAY_MS: '0',
  };
  const settings: LoadSettings = {
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
    amount: options.amount,
  };
  const db = (name: string) => join(work, `${name}.db`);
  const startService = (name: string, database: string, nodeArgs: readonly string[] = []) =>
    start(
      name,
      SERVICE_MAIN,
      ['serve', '--host', '127.0.0.1', '--port', '0', ...options.serviceArgs],
      { ...serviceEnv, DATABASE_URL: `sqlite:${database}` },
      [...options.serviceNodeArgs, ...nodeArgs],
    );

  log(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, load average ${machine.loadAverage.toFixed(1)}; work files in ${work}`);
  if (machine.loadAverage > machine.cores / 2) log('  warning: this machine is busy with other work; expect noisy figures');
  const base = db('base');
  const accounts = await createBenchDatabase(base, serviceEnv);
  growAccounts(base, options.accounts[0]!);
  const accountsFile = join(work, 'accounts.json');
  writeFileSync(accountsFile, JSON.stringify(Object.values(accounts).map((account) => ({ ...account, premium: true }))));

  // On a copy of its own, since the POSTs change the accounts: every server below starts from the same rows.
  copyDatabase(base, db('capture'));
  const probe = await startService('service', db('capture'));
  const reference = await capture(probe, accounts);
  await stop(probe);
  const headersFile = join(work, 'headers.json');
  writeFileSync(headersFile, JSON.stringify(reference.templates));

  log(`table 1: ${options.connections} connections, ${options.accounts[0]!.toLocaleString('en-US')} accounts`);
  for (const name of ['service', 'ceiling', 'express']) copyDatabase(base, db(name));
  const peerArgs = ['--host', '127.0.0.1', '--port', '0', '--headers', headersFile];
  // All are started now but only one is ever under load: measured back to back per endpoint, they see the same machine.
  const profiling = options.profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`];
  const service = await startService('service', db('service'), profiling);
  const ceiling = await start('ceiling', CEILING, [...peerArgs, '--accounts', accountsFile], baseEnv);
  const sqliteCeiling = await start('ceiling+sqlite', CEILING, [...peerArgs, '--accounts', accountsFile, '--sqlite', db('ceiling')], baseEnv);
  const express = await start('express', EXPRESS, [...peerArgs, '--database', db('express')], baseEnv);
  const tableCalls = options.calls === null ? BENCH_CALLS : BENCH_CALLS.filter((call) => options.calls!.includes(call.id));
  if (tableCalls.length === 0) throw new Error(`--calls names none of ${BENCH_CALLS.map((call) => call.id).join(', ')}`);
  const jobs: Job[] = tableCalls.flatMap((call) =>
    [service, ceiling, ...(call.writes ? [sqliteCeiling] : []), express].map((server) => ({
      key: `${server.name} ${call.id}`,
      group: call.id,
      server,
      call,
      settings,
    })),
  );
  const cells = await measureInTurn(jobs, options.rounds, accounts, reference.answers);
  const cell = (server: ServerProcess, call: BenchCall) => cells.get(`${server.name} ${call.id}`)!;
  const endpoints: EndpointRow[] = tableCalls.map((call) => ({
    call,
    service: cell(service, call),
    ceiling: cell(call.writes ? sqliteCeiling : ceiling, call),
    express: cell(express, call),
    memoryCeiling: call.writes ? cell(ceiling, call) : null,
  }));
  const endpointPeakRssMB = new Map<string, number | null>();
  for (const server of [service, ceiling, sqliteCeiling, express]) {
    if (server.exit() !== null) log(`  warning: ${server.name} ${server.exit()} before the end of table 1; it last wrote: ${lastWords(server)}`);
    endpointPeakRssMB.set(server.name, residentMemory(server.pid)?.peakMB ?? null);
    await stop(server);
  }

  log(`start-up: ${options.starts} starts`);
  copyDatabase(base, db('startup'));
  const starts = [await startTimes(db('startup'), options.accounts[0]!, options, serviceEnv)];

  log(`table 2: GET /user by accounts (${options.accounts.join(', ')}) and connections (${options.scaleConnections.join(', ')})`);
  const userCall = BENCH_CALLS.find((call) => call.id === 'user')!;
  // One database and one service per size, all started; measured in turn per connection count, like table 1.
  copyDatabase(base, db('scale'));
  const services: ServerProcess[] = [];
  for (const size of options.accounts) {
    const seeding = performance.now();
    growAccounts(db('scale'), size);
    copyDatabase(db('scale'), db(`scale-${size}`));
    log(`  ${size.toLocaleString('en-US')} accounts (seeded in ${Math.round(performance.now() - seeding)} ms)`);
  }
  for (const size of options.accounts) services.push(await startService(`service ${size}`, db(`scale-${size}`)));
  const scaleJobs: Job[] = options.scaleConnections.flatMap((connections) =>
    services.map((server) => ({
      key: `${server.name} ${connections}`,
      group: String(connections),
      server,
      call: userCall,
      settings: { ...settings, connections },
    })),
  );
  const scaleCells = await measureInTurn(scaleJobs, options.rounds, accounts, reference.answers);
  const scaling: ScaleRow[] = [];
  for (const [index, size] of options.accounts.entries()) {
    const server = services[index]!;
    const peakRssMB = residentMemory(server.pid)?.peakMB ?? null;
    const cellsBySize = new Map(options.scaleConnections.map((connections) => [connections, scaleCells.get(`${server.name} ${connections}`)!]));
    scaling.push({ accounts: size, cells: cellsBySize, peakRssMB });
    await stop(server);
  }
  if (options.accounts.length > 1) starts.push(await startTimes(db(`scale-${options.accounts.at(-1)!}`), options.accounts.at(-1)!, options, serviceEnv));

  return {
    machine: { ...machine, loadAverageAtEnd: loadavg()[0]! },
    settings: { command, ...settings, scaleConnections: options.scaleConnections, rounds: options.rounds },
    endpoints,
    endpointPeakRssMB,
    scaling,
    startTimes: starts,
  };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv, process.env, process.cwd());
  if ('usage' in options) {
    process.stdout.write(options.usage);
    return argv.includes('--help') ? 0 : 2;
  }
  const command = `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const work = mkdtempSync(join(tmpdir(), 'account-api-bench-'));
  const began = performance.now();
  const cleanUp = async () => {
    await Promise.all([...running].map((server) => stop(server)));
    rmSync(work, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanUp().then(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanUp().then(() => process.exit(143)));
  try {
    const results = await run(options, command, work);
    mkdirSync(options.out, { recursive: true });
    const markdown = renderMarkdown(results, 'results.svg');
    writeFileSync(join(options.out, 'results.md'), markdown);
    writeFileSync(join(options.out, 'results.svg'), renderChart(results));
    process.stdout.write(markdown);
    log(`done in ${Math.round((performance.now() - began) / 1000)} s: ${join(options.out, 'results.md')} and results.svg`);
    return 0;
  } finally {
    await cleanUp();
  }
}

process.exitCode = await main();
