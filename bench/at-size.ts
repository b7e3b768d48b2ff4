// `npm run bench -- --at-size`: the service on PostgreSQL + Redis over one database grown in steps (10^3, 10^6, 10^7
// accounts): at each size its start-up time, peak resident memory, and GET /user's CPU per answer (the service, its
// PostgreSQL backends, redis-server) with one hot key and with keys drawn at random from the whole table.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AT_SIZE_PREFIX, growTo, planSeeding, writeAuthorizations } from './at-size-seed.ts';
import { BENCH_CALLS, type BenchAccounts, type BenchCall } from './calls.ts';
import { loadSettingsOf, verify, type LoadSettings, type RequestPlan } from './load.ts';
import type { AtSizeOptions, BenchOptions } from './options.ts';
import { freePort, peakResidentMemoryOfTree, timeToFirstAnswer, type ServerProcess } from './processes.ts';
import { startRedis } from './redis-server.ts';
import { median } from './measurement.ts';
import { describeMachine, type Cell, type Machine } from './results.ts';
import { PostgresProbe, RowsProbe, scaleOutMeter, type ScaleOutProbes } from './scale-out-meter.ts';
import { onAdmin } from './scale-out.ts';
import { createBenchAccounts } from './seed.ts';
import { Fleet, launch, leanServiceEnv, type Workspace } from './servers.ts';
import { measureInTurn, type Job } from './turns.ts';

const HOT_CALL: BenchCall = { ...BENCH_CALLS.find((call) => call.id === 'user')!, label: 'GET /user, one hot key' };

/** GET /user with a different sampled account's key on every request. */
export const AT_SIZE_SPREAD_CALL: BenchCall = {
  ...HOT_CALL,
  id: 'user-spread',
  label: 'GET /user, keys spread over the table',
  shapeProblem: (body) => (SPREAD_BODY.test(body) ? null : `not a seeded account's GET /user: ${body.slice(0, 200)}`),
};
const SPREAD_BODY = new RegExp(
  `^\\{"status":"success","messages":\\[\\],"meta":\\{\\},"data":\\{"user_id":(\\d+),"username":"${AT_SIZE_PREFIX}\\1","name":"Seeded ${AT_SIZE_PREFIX}\\1","timezone":"UTC"\\}\\}$`,
);
/** The same check in Lua's pattern language, for wrk (which has back-references too: %1). */
const SPREAD_PATTERN = `^{"status":"success","messages":%[%],"meta":{},"data":{"user_id":(%d+),"username":"${AT_SIZE_PREFIX}%1","name":"Seeded ${AT_SIZE_PREFIX}%1","timezone":"UTC"}}$`;

export interface AtSizeRow {
  readonly accounts: number;
  /** Seconds to grow the table to this size (rows made, sampled keys, VACUUM ANALYZE). */
  readonly seedingSeconds: number;
  /** Sampled accounts with real keys that the spread run cycles through. */
  readonly spreadKeys: number;
  /** One-minute load average when this size's measurements began. */
  readonly loadAverage: number;
  readonly startsMs: readonly number[];
  /** The measured service's peak resident memory (VmHWM) over its runs, MB. */
  readonly peakRssMB: number | null;
  readonly hot: Cell;
  readonly spread: Cell;
}

export interface AtSizeResults {
  readonly machine: Machine;
  readonly command: string;
  readonly smoke: boolean;
  readonly settings: LoadSettings & { readonly rounds: number; readonly starts: number };
  readonly rows: readonly AtSizeRow[];
}

async function firstLines(file: string, count: number): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(file) })) {
    lines.push(line);
    if (lines.length === count) break;
  }
  return lines;
}

/** Checks three of the sampled keys against the server, then plans wrk's load over all of them from where the last run stopped. */
async function planSpread(server: ServerProcess, authorizations: string, cursor: { next: number }, accounts: BenchAccounts): Promise<RequestPlan> {
  const url = `${server.url}/api/v0/user`;
  for (const authorization of await firstLines(authorizations, 3)) {
    const response = await fetch(url, { headers: { authorization } });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${AT_SIZE_SPREAD_CALL.label} answered ${response.status}: ${body.slice(0, 300)}`);
    const problem = AT_SIZE_SPREAD_CALL.shapeProblem(body, accounts.main, 0);
    if (problem !== null) throw new Error(`${AT_SIZE_SPREAD_CALL.label}: ${problem}`);
  }
  return { call: AT_SIZE_SPREAD_CALL, url, headers: {}, answers: [], rawHeaders: [], spread: { file: authorizations, cursor, bodyPattern: SPREAD_PATTERN } };
}

async function startTimes(env: NodeJS.ProcessEnv, options: BenchOptions): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < options.starts; i++) {
    const port = await freePort();
    const args = ['serve', '--host', '127.0.0.1', '--port', String(port), ...options.serviceArgs];
    times.push(await timeToFirstAnswer(args, port, env, options.serviceNodeArgs));
  }
  return times;
}

/** The at-size table: one PostgreSQL database grown through `atSize.accounts`, measured at each size. */
export async function runAtSize(
  options: BenchOptions,
  atSize: AtSizeOptions,
  command: string,
  work: string,
  fleet: Fleet,
  /** Undone by the caller if the bench is interrupted; emptied again when this returns. */
  leftovers: Set<() => Promise<unknown>>,
  log: (line: string) => void,
): Promise<AtSizeResults> {
  const machine = describeMachine(options.serviceNodeArgs);
  const settings: LoadSettings = loadSettingsOf(options);
  log(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, load average ${machine.loadAverage.toFixed(1)}; work files in ${work}`);
  const database = `account_api_bench_size_${randomBytes(5).toString('hex')}`;
  const pgUrl = (() => {
    const url = new URL(atSize.postgresUrl);
    url.pathname = `/${database}`;
    return url.toString();
  })();
  const drop = () => onAdmin(atSize.postgresUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  await onAdmin(atSize.postgresUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  leftovers.add(drop);
  const redis = await startRedis().catch(async (error: Error) => {
    leftovers.delete(drop);
    await drop();
    throw new Error(`redis-server could not be started: ${error.message}`);
  });
  leftovers.add(redis.stop);
  const closing: (() => Promise<unknown>)[] = [];
  try {
    const accounts = await createBenchAccounts(pgUrl, leanServiceEnv());
    // launch() needs a workspace only for the SQLite roles' files; the service on PostgreSQL is given its URL.
    const workspace: Workspace = { dir: work, base: '', accounts, accountsFile: '', headersFile: '', references: new Map() };
    const postgres = await PostgresProbe.open(atSize.postgresUrl, database);
    closing.push(() => postgres.close());
    const rowsProbe = await RowsProbe.open(pgUrl);
    closing.push(() => rowsProbe.close());
    // Only the CPU figures are reported: a short settle lets the last run's stragglers finish, not the statistics flush.
    const probes: ScaleOutProbes = { postgres, rows: rowsProbe, redis: redis.client, redisPid: redis.pid, settleMs: 1000 };
    const redisUrl = `${redis.url}/1`;
    const env = { ...leanServiceEnv(), DATABASE_URL: pgUrl, REDIS_URL: redisUrl };

    const rows: AtSizeRow[] = [];
    const plan = await planSeeding(pgUrl, atSize.accounts, atSize.sample);
    let next = plan.firstId;
    for (const size of atSize.accounts) {
      log(`${size.toLocaleString('en-US')} accounts`);
      const began = performance.now();
      next = await growTo(pgUrl, plan, next, size, log);
      const authorizations = join(work, `at-size-${size}.authorizations`);
      const spreadKeys = await writeAuthorizations(plan, size, authorizations);
      const seedingSeconds = (performance.now() - began) / 1000;
      log(`  grown in ${seedingSeconds.toFixed(1)} s; ${spreadKeys.toLocaleString('en-US')} sampled accounts with real keys`);
      // Every size starts from the same Redis: nothing counted or stamped at the last size.
      await redis.client.flushall();
      const loadAverage = loadavg()[0]!;

      const startsMs = await startTimes(env, options);
      log(`  start to first answer: ${startsMs.map((t) => `${Math.round(t)} ms`).join(', ')}`);
      const server = await launch(fleet, workspace, 'service-pg', options, { name: `service ${size}`, database: pgUrl, redisUrl });
      const cursor = { next: 0 };
      const jobs: Job[] = [
        { key: 'hot', group: 'hot', server, call: HOT_CALL, settings, plan: () => verify(server.url, HOT_CALL, accounts, null), meter: scaleOutMeter(probes, null, null) },
        {
          key: 'spread',
          group: 'spread',
          server,
          call: AT_SIZE_SPREAD_CALL,
          settings,
          plan: () => planSpread(server, authorizations, cursor, accounts),
          meter: scaleOutMeter(probes, { keys: spreadKeys, inFlight: settings.connections }, null),
        },
      ];
      const cells = await measureInTurn(jobs, options.rounds, accounts, new Map(), work, log);
      const peakRssMB = peakResidentMemoryOfTree(server.pid);
      await fleet.stop(server);
      rows.push({ accounts: size, seedingSeconds, spreadKeys, loadAverage, startsMs, peakRssMB, hot: cells.get('hot')!, spread: cells.get('spread')! });
    }
    return {
      machine: { ...machine, loadAverageAtEnd: loadavg()[0]! },
      command,
      smoke: options.smoke,
      settings: { ...settings, rounds: options.rounds, starts: options.starts },
      rows,
    };
  } finally {
    for (const close of closing) await close().catch(() => undefined);
    await redis.stop();
    await drop().catch((error: Error) => log(`  warning: could not drop ${database}: ${error.message}`));
    leftovers.delete(redis.stop);
    leftovers.delete(drop);
  }
}

export const medianStart = (row: AtSizeRow) => median(row.startsMs);
