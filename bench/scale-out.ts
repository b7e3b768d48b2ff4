// Table 3: the service on PostgreSQL + Redis beside the same service on SQLite, with the CPU of every process that works for
// an answer (the service, its PostgreSQL backends, redis-server), PostgreSQL transactions and Redis commands per answer.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { seedPostgres, seedSqlite } from './bulk-accounts.ts';
import { runToEnd, SERVICE_MAIN } from './processes.ts';
import { basicAuthorization, BENCH_CALLS, type BenchAccounts, type BenchCall } from './calls.ts';
import { verify, type LoadSettings, type RequestPlan } from './load.ts';
import type { BenchOptions, ScaleOutOptions } from './options.ts';
import type { ServerProcess } from './processes.ts';
import { startRedis, type BenchRedis } from './redis-server.ts';
import type { Cell, ScaleOutResults, ScaleOutRow } from './results.ts';
import { PostgresProbe, RowsProbe, scaleOutMeter } from './scale-out-meter.ts';
import { createBenchAccounts, createBenchDatabase } from './seed.ts';
import { Fleet, launch, leanServiceEnv, type Workspace } from './servers.ts';
import { measureInTurn, type Job } from './turns.ts';

const PREFIX = 'spread';
/** Answers sent one by one after the timed runs, to count the service's round trips to Redis. */
const COUNTED_ANSWERS = 50;

const byId = (id: string) => BENCH_CALLS.find((call) => call.id === id)!;

/** GET /user with the key of a different account each request, cycling through every seeded account. */
export const SPREAD_CALL: BenchCall = {
  ...byId('user'),
  id: 'user-spread',
  label: 'GET /user, keys spread over many accounts',
  shapeProblem: (body) => (SPREAD_BODY.test(body) ? null : `not a seeded account's GET /user: ${body.slice(0, 200)}`),
};
const SPREAD_BODY = new RegExp(`^\\{"status":"success","messages":\\[\\],"meta":\\{\\},"data":\\{"user_id":\\d+,"username":"${PREFIX}\\d+","name":"Seeded ${PREFIX}\\d+","timezone":"UTC"\\}\\}$`);
/** The same check in Lua's pattern language, for wrk. */
const SPREAD_PATTERN = `^{"status":"success","messages":%[%],"meta":{},"data":{"user_id":%d+,"username":"${PREFIX}%d+","name":"Seeded ${PREFIX}%d+","timezone":"UTC"}}$`;

export const SCALE_OUT_CALLS: readonly BenchCall[] = [byId('user'), SPREAD_CALL, byId('post-settings')];

/** The bench's database URL: the admin URL's server and user, another database. */
function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** One query (or a few) on a connection of its own, closed after; shared with the at-size bench. */
export async function onAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `username:key` lines to the Authorization header values wrk sends, one a line. */
async function authorizationsFile(keysFile: string, out: string): Promise<void> {
  const output = createWriteStream(out);
  for await (const line of createInterface({ input: createReadStream(keysFile) })) {
    if (line === '') continue;
    if (!output.write(`Basic ${Buffer.from(line).toString('base64')}\n`)) await once(output, 'drain');
  }
  output.end();
  await once(output, 'finish');
}

/** Lines `from` to `from + count` of a file (wrapping), without reading a million lines into memory twice. */
async function linesOf(file: string, from: number, count: number, total: number): Promise<string[]> {
  const wanted = new Set(Array.from({ length: count }, (_, i) => (from + i) % total));
  const found = new Map<number, string>();
  let index = 0;
  for await (const line of createInterface({ input: createReadStream(file) })) {
    if (wanted.has(index)) found.set(index, line);
    index += 1;
    if (found.size === wanted.size) break;
  }
  return [...wanted].map((i) => found.get(i)!);
}

async function get(url: string, authorization: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { headers: { authorization } });
  return { status: response.status, body: await response.text() };
}

/** One engine's side: its database's bench accounts and spread keys, and the service on it. */
interface Side {
  readonly server: ServerProcess;
  readonly accounts: BenchAccounts;
  readonly authorizations: string;
  readonly cursor: { next: number };
}

/** Checks a few of the spread keys on `side`'s server, then plans wrk's load over all of them from where the last run stopped. */
async function planSpread(side: Side, total: number): Promise<RequestPlan> {
  const url = `${side.server.url}/api/v0/user`;
  for (const authorization of await linesOf(side.authorizations, side.cursor.next, 3, total)) {
    const answer = await get(url, authorization);
    if (answer.status !== 200) throw new Error(`${SPREAD_CALL.label} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    const problem = SPREAD_CALL.shapeProblem(answer.body, side.accounts.main, 0);
    if (problem !== null) throw new Error(`${SPREAD_CALL.label}: ${problem}`);
  }
  side.cursor.next += 3;
  return { call: SPREAD_CALL, url, headers: {}, answers: [], rawHeaders: [], spread: { file: side.authorizations, cursor: side.cursor, bodyPattern: SPREAD_PATTERN } };
}

/** One answer of the call (its `index`th body, for a write), checked for its status. */
async function send(base: string, side: Side, call: BenchCall, index: number): Promise<void> {
  const headers: Record<string, string> = { authorization: basicAuthorization(side.accounts[call.account]) };
  if (call.method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
  const body = call.bodies.length === 0 ? undefined : call.bodies[index % call.bodies.length];
  const response = await fetch(`${base}${call.path}`, { method: call.method, headers, body });
  await response.arrayBuffer();
  if (response.status !== call.expectedStatus) throw new Error(`${call.label} answered ${response.status} while counting Redis round trips`);
}

/**
 * Where the service on PostgreSQL delivers the webhook event of every bench write (one endpoint, every event type): a receiver
 * in the bench's process answering 204, so a write costs what docs/capacity.md assumes, one audit entry and one delivered
 * event. The SQLite side has no endpoint: its deliveries would run on into the next measured run, with no meter to count them.
 */
async function webhookReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the webhook receiver has no port');
  return { url: `http://127.0.0.1:${address.port}/account-api`, server };
}

/** The service reaching a receiver on this machine: the bench's only webhook endpoint is on 127.0.0.1. */
const WEBHOOKS_ENV = { WEBHOOK_ALLOW_PRIVATE: '1' };

async function addEndpoint(databaseUrl: string, url: string): Promise<void> {
  await runToEnd(SERVICE_MAIN, ['webhooks', 'add', url], { ...leanServiceEnv(), ...WEBHOOKS_ENV, DATABASE_URL: databaseUrl });
}

/** Client reads Redis has processed (INFO stats): one per round trip, however many commands a pipelined write carries. */
async function readsProcessed(redis: BenchRedis): Promise<number> {
  const match = /^total_reads_processed:(\d+)/m.exec(await redis.client.info('stats'));
  if (match === null) throw new Error('this redis-server reports no total_reads_processed (Redis 6.2 or newer does)');
  return Number(match[1]);
}

/**
 * Round trips the service makes to Redis per answer: the reads Redis processed from its clients while the answers were sent
 * one at a time after the timed runs (so none shares a write with another request's), less the bench's own INFO.
 */
async function countRoundTrips(redis: BenchRedis, side: Side, call: BenchCall, total: number): Promise<number> {
  const base = `${side.server.url}/api/v0`;
  // The one key's calls are counted as they run in steady state: the spread run before them has pushed the key out of the
  // instance's memory of keys seen right, and its first read after that is a cold one (the spread row counts those).
  if (call.id !== 'user-spread') await send(base, side, call, 0);
  await new Promise((done) => setTimeout(done, 200)); // what that answer left in flight (a refund, a stamp) is not counted
  const before = await readsProcessed(redis);
  if (call.id === 'user-spread') {
    for (const authorization of await linesOf(side.authorizations, side.cursor.next, COUNTED_ANSWERS, total)) await get(`${base}/user`, authorization);
    side.cursor.next += COUNTED_ANSWERS;
  } else {
    for (let i = 0; i < COUNTED_ANSWERS; i++) await send(base, side, call, i);
  }
  await new Promise((done) => setTimeout(done, 200)); // the last answer's commands sent after it (a refund, a stamp)
  const after = await readsProcessed(redis);
  return (after - before - 1) / COUNTED_ANSWERS; // the second INFO's own read
}

/** Table 3, or why it was not measured (no PostgreSQL or no redis-server here: the rest of the bench does not need them). */
export async function runScaleOut(
  options: BenchOptions,
  workspace: Workspace,
  fleet: Fleet,
  settings: LoadSettings,
  log: (line: string) => void,
): Promise<ScaleOutResults> {
  const scale: ScaleOutOptions | null = options.scaleOut;
  if (scale === null) return { measured: false, reason: 'left out (--no-scale-out)' };
  const database = `account_api_bench_${randomBytes(5).toString('hex')}`;
  try {
    await onAdmin(scale.postgresUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  } catch (error) {
    const reason = `PostgreSQL did not answer at ${scale.postgresUrl.replace(/:[^:@/]*@/, ':***@')}: ${(error as Error).message}`;
    log(`  table 3 not measured: ${reason}`);
    return { measured: false, reason };
  }
  const pgUrl = databaseUrl(scale.postgresUrl, database);
  let redis: BenchRedis | null = null;
  const closing: (() => Promise<unknown>)[] = [];
  try {
    try {
      redis = await startRedis();
    } catch (error) {
      const reason = `redis-server could not be started: ${(error as Error).message}`;
      log(`  table 3 not measured: ${reason}`);
      return { measured: false, reason };
    }
    const seeding = { sqlite: 0, postgres: 0 };
    const seed = { accounts: scale.accounts, usernamePrefix: PREFIX };
    const sqlitePath = join(workspace.dir, 'scale-out.db');
    const sqliteAccounts = await createBenchDatabase(sqlitePath, leanServiceEnv());
    let began = performance.now();
    seedSqlite(sqlitePath, { ...seed, keysOut: join(workspace.dir, 'scale-out-sqlite.keys') });
    seeding.sqlite = (performance.now() - began) / 1000;
    const pgAccounts = await createBenchAccounts(pgUrl, leanServiceEnv());
    const sizeBefore = await onAdmin(pgUrl, (client) => client.query('SELECT pg_database_size(current_database())::float8 AS size'));
    began = performance.now();
    await seedPostgres(pgUrl, { ...seed, keysOut: join(workspace.dir, 'scale-out-postgres.keys') });
    seeding.postgres = (performance.now() - began) / 1000;
    // The bulk load's own autovacuum must not run during (and be counted in) the measured runs.
    await onAdmin(pgUrl, (client) => client.query('VACUUM ANALYZE'));
    const sizeAfter = await onAdmin(pgUrl, (client) => client.query('SELECT pg_database_size(current_database())::float8 AS size'));
    const bytesPerAccount = (Number(sizeAfter.rows[0].size) - Number(sizeBefore.rows[0].size)) / scale.accounts;
    const receiver = await webhookReceiver();
    closing.push(() => new Promise((done) => receiver.server.close(done)));
    await addEndpoint(pgUrl, receiver.url);
    log(`  ${scale.accounts.toLocaleString('en-US')} accounts with keys: SQLite ${seeding.sqlite.toFixed(1)} s, PostgreSQL ${seeding.postgres.toFixed(1)} s`);
    for (const engine of ['sqlite', 'postgres']) {
      await authorizationsFile(join(workspace.dir, `scale-out-${engine}.keys`), join(workspace.dir, `scale-out-${engine}.authorizations`));
    }

    const sqliteServer = await launch(fleet, workspace, 'service', options, { name: 'service on SQLite', database: sqlitePath });
    // A Redis database number of its own, though this redis-server serves the bench alone.
    const pgServer = await launch(fleet, workspace, 'service-pg', options, { name: 'service on PostgreSQL', database: pgUrl, redisUrl: `${redis.url}/1`, env: WEBHOOKS_ENV });
    const sides = new Map<ServerProcess, Side>([
      [sqliteServer, { server: sqliteServer, accounts: sqliteAccounts, authorizations: join(workspace.dir, 'scale-out-sqlite.authorizations'), cursor: { next: 0 } }],
      [pgServer, { server: pgServer, accounts: pgAccounts, authorizations: join(workspace.dir, 'scale-out-postgres.authorizations'), cursor: { next: 0 } }],
    ]);
    const postgres = await PostgresProbe.open(scale.postgresUrl, database);
    closing.push(() => postgres.close());
    const rowsProbe = await RowsProbe.open(pgUrl);
    closing.push(() => rowsProbe.close());
    const probes = { postgres, rows: rowsProbe, redis: redis.client, redisPid: redis.pid, settleMs: scale.settleSeconds * 1000 };

    // A smoke run's 0.3 s can pass without one answer from a write through PostgreSQL on a busy machine (its fsync, the
    // event's delivery beside it): table 3's runs then last whole seconds, still a smoke.
    const runSettings: LoadSettings = options.smoke ? { ...settings, durationSeconds: Math.max(settings.durationSeconds, 2) } : settings;
    const jobs: Job[] = SCALE_OUT_CALLS.flatMap((call) =>
      [...sides.values()].map((side) => ({
        key: `${side.server.name} ${call.id}`,
        group: call.id,
        server: side.server,
        call,
        settings: runSettings,
        plan: () => (call.id === 'user-spread' ? planSpread(side, scale.accounts) : verify(side.server.url, call, side.accounts, null)),
        ...(side.server === pgServer
          ? { meter: scaleOutMeter(probes, call.id === 'user-spread' ? { keys: scale.accounts, inFlight: settings.connections } : null, call.method === 'POST' ? { servicePid: pgServer.pid } : null) }
          : {}),
      })),
    );
    const cells = await measureInTurn(jobs, options.rounds, sqliteAccounts, new Map(), workspace.dir, log);
    const rows: ScaleOutRow[] = [];
    for (const call of SCALE_OUT_CALLS) {
      let redisRoundTrips: number | null = null;
      try {
        redisRoundTrips = await countRoundTrips(redis, sides.get(pgServer)!, call, scale.accounts);
      } catch (error) {
        log(`  Redis round trips of ${call.label} not counted: ${(error as Error).message}`);
      }
      rows.push({ call, sqlite: cells.get(`${sqliteServer.name} ${call.id}`)!, postgres: cells.get(`${pgServer.name} ${call.id}`)!, redisRoundTrips });
    }
    await fleet.stop(sqliteServer);
    await fleet.stop(pgServer);
    return { measured: true, accounts: scale.accounts, settleSeconds: scale.settleSeconds, seedingSeconds: seeding, bytesPerAccount, rows };
  } finally {
    for (const close of closing) await close().catch(() => undefined);
    await redis?.stop();
    await onAdmin(scale.postgresUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)).catch((error: Error) =>
      log(`  warning: could not drop ${database}: ${error.message}`),
    );
  }
}
