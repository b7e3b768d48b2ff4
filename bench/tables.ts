// `npm run bench`'s measurements: table 1 (every endpoint on every server), start-up, and table 2 (GET /user by size and load).
import { loadavg } from 'node:os';
import { BENCH_CALLS, type BenchCall } from './calls.ts';
import { loadSettingsOf, type LoadSettings } from './load.ts';
import type { BenchOptions } from './options.ts';
import { freePort, peakResidentMemoryOfTree, residentByKindOf, timeToFirstAnswer, type ResidentByKind, type ServerProcess } from './processes.ts';
import { describeMachine, type BenchResults, type EndpointRow, type ScaleRow, type StartTimes } from './results.ts';
import { runScaleOut } from './scale-out.ts';
import { copyDatabase, growAccounts } from './seed.ts';
import { databaseIn, DEFAULTS_DESCRIPTION, Fleet, launch, leanServiceEnv, prepareWorkspace, type Role, type Workspace } from './servers.ts';
import { lastWords, measureInTurn, type Job } from './turns.ts';

async function startTimes(database: string, accounts: number, options: BenchOptions, log: (line: string) => void): Promise<StartTimes> {
  const times: number[] = [];
  for (let i = 0; i < options.starts; i++) {
    const port = await freePort();
    const args = ['serve', '--host', '127.0.0.1', '--port', String(port), ...options.serviceArgs];
    times.push(await timeToFirstAnswer(args, port, { ...leanServiceEnv(), DATABASE_URL: `sqlite:${database}` }, options.serviceNodeArgs));
  }
  log(`  start to first answer with ${accounts.toLocaleString('en-US')} accounts: ${times.map((t) => `${Math.round(t)} ms`).join(', ')}`);
  return { accounts, samplesMs: times };
}

/**
 * Which servers table 1 measures a call on: for a write, the ceiling writing with node:sqlite too. The service at its defaults
 * answers every call, as the lean one does, though only GET /user is reported: a process that waits minutes between its runs
 * has its heap given back by V8 meanwhile, and the next seconds of load pay for growing it again (docs/operations.md), so
 * the two are compared with the same history.
 */
function rolesFor(call: BenchCall): Role[] {
  return [
    'service',
    'service-defaults',
    ...(call.writes ? (['ceiling+sqlite'] as const) : []),
    'ceiling',
    'fastify',
    'express',
  ];
}

async function tableOne(fleet: Fleet, workspace: Workspace, options: BenchOptions, settings: LoadSettings, log: (line: string) => void) {
  const calls = options.calls === null ? BENCH_CALLS : BENCH_CALLS.filter((call) => options.calls!.includes(call.id));
  if (calls.length === 0) throw new Error(`--calls names none of ${BENCH_CALLS.map((call) => call.id).join(', ')}`);
  const needed = new Set(calls.flatMap(rolesFor));
  // All are started now but only one is ever under load: measured back to back per endpoint, they see the same machine.
  const servers = new Map<Role, ServerProcess>();
  const profiling = options.profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`];
  for (const role of ['service', 'service-defaults', 'ceiling', 'ceiling+sqlite', 'fastify', 'express'] as const) {
    if (needed.has(role)) servers.set(role, await launch(fleet, workspace, role, options, role === 'service' ? { nodeArgs: profiling } : {}));
  }
  const jobs: Job[] = calls.flatMap((call) =>
    rolesFor(call).map((role) => ({ key: `${role} ${call.id}`, group: call.id, server: servers.get(role)!, call, settings })),
  );
  const cells = await measureInTurn(jobs, options.rounds, workspace.accounts, workspace.references, workspace.dir, log);
  const cell = (role: Role, call: BenchCall) => cells.get(`${role} ${call.id}`)!;
  const endpoints: EndpointRow[] = calls.map((call) => ({
    call,
    service: cell('service', call),
    ceiling: cell(call.writes ? 'ceiling+sqlite' : 'ceiling', call),
    fastify: cell('fastify', call),
    express: cell('express', call),
    memoryCeiling: call.writes ? cell('ceiling', call) : null,
  }));
  const user = calls.find((call) => call.id === 'user');
  const defaultSettings =
    user === undefined ? null : { call: user, lean: cell('service', user), defaults: cell('service-defaults', user), description: DEFAULTS_DESCRIPTION };
  const endpointPeakRssMB = new Map<string, number | null>();
  const endpointMemory = new Map<string, ResidentByKind | null>();
  for (const [role, server] of servers) {
    if (server.exit() !== null) log(`  warning: ${server.name} ${server.exit()} before the end of table 1; it last wrote: ${lastWords(server)}`);
    endpointPeakRssMB.set(role, peakResidentMemoryOfTree(server.pid));
    endpointMemory.set(role, residentByKindOf(server.pid));
    await fleet.stop(server);
  }
  return { endpoints, defaultSettings, endpointPeakRssMB, endpointMemory };
}

async function tableTwo(fleet: Fleet, workspace: Workspace, options: BenchOptions, settings: LoadSettings, log: (line: string) => void) {
  const userCall = BENCH_CALLS.find((call) => call.id === 'user')!;
  // One database and one service per size, all started; measured in turn per connection count, like table 1.
  const growing = databaseIn(workspace.dir, 'scale');
  copyDatabase(workspace.base, growing);
  for (const size of options.accounts) {
    const seeding = performance.now();
    growAccounts(growing, size);
    copyDatabase(growing, databaseIn(workspace.dir, `scale-${size}`));
    log(`  ${size.toLocaleString('en-US')} accounts (seeded in ${Math.round(performance.now() - seeding)} ms)`);
  }
  const services: ServerProcess[] = [];
  for (const size of options.accounts) {
    services.push(await launch(fleet, workspace, 'service', options, { name: `service ${size}`, database: databaseIn(workspace.dir, `scale-${size}`) }));
  }
  const jobs: Job[] = options.scaleConnections.flatMap((connections) =>
    services.map((server) => ({ key: `${server.name} ${connections}`, group: String(connections), server, call: userCall, settings: { ...settings, connections } })),
  );
  const cells = await measureInTurn(jobs, options.rounds, workspace.accounts, workspace.references, workspace.dir, log);
  const scaling: ScaleRow[] = [];
  for (const [index, size] of options.accounts.entries()) {
    const server = services[index]!;
    const cellsBySize = new Map(options.scaleConnections.map((connections) => [connections, cells.get(`${server.name} ${connections}`)!]));
    scaling.push({ accounts: size, cells: cellsBySize, peakRssMB: peakResidentMemoryOfTree(server.pid) });
    await fleet.stop(server);
  }
  return scaling;
}

export async function runTables(options: BenchOptions, command: string, work: string, fleet: Fleet, log: (line: string) => void): Promise<BenchResults> {
  const machine = describeMachine(options.serviceNodeArgs);
  const settings: LoadSettings = loadSettingsOf(options);
  log(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, load average ${machine.loadAverage.toFixed(1)}; work files in ${work}`);
  if (machine.loadAverage > machine.cores / 2) log('  warning: this machine is busy with other work; expect noisy figures');
  const workspace = await prepareWorkspace(work, options.accounts[0]!, options, log);

  log(`table 1: ${options.connections} connections, ${options.accounts[0]!.toLocaleString('en-US')} accounts, ${options.rounds} round(s)`);
  const one = await tableOne(fleet, workspace, options, settings, log);

  log(`start-up: ${options.starts} starts`);
  const startup = databaseIn(work, 'startup');
  copyDatabase(workspace.base, startup);
  const starts = [await startTimes(startup, options.accounts[0]!, options, log)];

  log(`table 2: GET /user by accounts (${options.accounts.join(', ')}) and connections (${options.scaleConnections.join(', ')})`);
  const scaling = await tableTwo(fleet, workspace, options, settings, log);
  const largest = options.accounts.at(-1)!;
  if (options.accounts.length > 1) starts.push(await startTimes(databaseIn(work, `scale-${largest}`), largest, options, log));

  log(`table 3: the service on PostgreSQL + Redis beside SQLite`);
  const scaleOut = await runScaleOut(options, workspace, fleet, settings, log);

  return {
    machine: { ...machine, loadAverageAtEnd: loadavg()[0]! },
    settings: { command, smoke: options.smoke, ...settings, scaleConnections: options.scaleConnections, rounds: options.rounds },
    ...one,
    scaling,
    startTimes: starts,
    scaleOut,
  };
}
