// The servers the bench compares, how each is started, and the database and reference answers they all start from.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_CALLS, type BenchAccounts, type CallId } from './calls.ts';
import { templateFrom, type HeaderTemplates } from './header-templates.ts';
import { verify } from './load.ts';
import type { BenchOptions } from './options.ts';
import { SERVICE_MAIN, SERVICE_NODE_FLAGS, startServer, type ServerProcess, type StartOptions } from './processes.ts';
import { copyDatabase, createBenchDatabase, growAccounts } from './seed.ts';

const CEILING = join(import.meta.dirname, 'ceiling-server.ts');
const FASTIFY = join(import.meta.dirname, 'fastify-peer.ts');
const EXPRESS = join(import.meta.dirname, 'express-peer.ts');
const BUDGET = '1000000000';

/**
 * service: the service at the bench's lean settings; service-defaults: at its defaults; service-pg: lean, on PostgreSQL +
 * Redis (table 3); ceiling: in memory; ceiling+sqlite: the ceiling writing with node:sqlite; fastify and express: the peers.
 */
export type Role = 'service' | 'service-defaults' | 'service-pg' | 'ceiling' | 'ceiling+sqlite' | 'fastify' | 'express';

/** What "the service at its defaults" means, for the results. */
export const DEFAULTS_DESCRIPTION =
  'LOG_LEVEL unset (info: one JSON line per answer, written to a file), MAX_EVENT_LOOP_DELAY_MS unset (overload shedding at ' +
  'its default), METRICS_PORT=0 (the Prometheus listener, not scraped during the run); only the rate budgets are raised, as ' +
  'in the lean settings, so that the bench measures answers rather than 429s (the counting still runs)';

/** A clean environment: nothing of the caller's (DATABASE_URL, REDIS_URL...) leaks into the servers under test. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME };
}

/** The bench's lean settings: the work itself, without the request log or load shedding, and rate budgets no run exhausts. */
export function leanServiceEnv(): NodeJS.ProcessEnv {
  return { ...defaultServiceEnv(), LOG_LEVEL: 'warn', MAX_EVENT_LOOP_DELAY_MS: '0' };
}

/** The service's defaults, except for the rate budgets (see DEFAULTS_DESCRIPTION) and a metrics listener. */
export function defaultServiceEnv(): NodeJS.ProcessEnv {
  return {
    ...cleanEnv(),
    RATE_LIMIT_PER_KEY: BUDGET,
    RATE_LIMIT_PER_ADDRESS: BUDGET,
    RATE_LIMIT_AUTH_FAILURES: BUDGET,
  };
}

/** The bench's working files: the database every server copies, the accounts, and the service's answers and headers. */
export interface Workspace {
  readonly dir: string;
  /** The database every server starts from a copy of. */
  readonly base: string;
  readonly accounts: BenchAccounts;
  /** The accounts, for the ceiling's --accounts. */
  readonly accountsFile: string;
  /** The service's response headers, for the peers' --headers. */
  readonly headersFile: string;
  /** What the service answered to each call: the bodies the others must match byte for byte. */
  readonly references: ReadonlyMap<CallId, readonly string[]>;
}

export const databaseIn = (dir: string, name: string) => join(dir, `${name.replace(/[^\w-]+/g, '-')}.db`);

/** Starts servers and stops them, keeping track of those still running so that an interrupted bench leaves none behind. */
export class Fleet {
  readonly #running = new Set<ServerProcess>();

  async start(start: () => Promise<ServerProcess>): Promise<ServerProcess> {
    const server = await start();
    this.#running.add(server);
    return server;
  }

  async stop(server: ServerProcess): Promise<void> {
    this.#running.delete(server);
    await server.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#running].map((server) => this.stop(server)));
  }
}

/**
 * Starts `role` as `name` on its own copy of the workspace's database (or on `database` when given), with the options of the
 * run (--service-arg, --service-node-arg) and `extra` (valgrind, a profile...).
 */
export function launch(
  fleet: Fleet,
  workspace: Workspace,
  role: Role,
  options: Pick<BenchOptions, 'serviceArgs' | 'serviceNodeArgs' | 'serviceEnv'>,
  extra: StartOptions & { readonly name?: string; readonly database?: string; readonly redisUrl?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<ServerProcess> {
  const name = extra.name ?? role;
  const database = extra.database ?? databaseIn(workspace.dir, name);
  if (extra.database === undefined) {
    if (role === 'service-pg') throw new Error('service-pg needs its PostgreSQL database URL');
    copyDatabase(workspace.base, database);
  }
  const peerArgs = ['--host', '127.0.0.1', '--port', '0', '--headers', workspace.headersFile];
  // The others run with the service's Node flags too (npm start's, not the run's --service-node-arg): the bench compares code.
  const start = (script: string, args: readonly string[], env: NodeJS.ProcessEnv, more: StartOptions = {}) =>
    fleet.start(() =>
      startServer(name, script, args, env, { ...extra, ...more, nodeArgs: [...(more.nodeArgs ?? SERVICE_NODE_FLAGS), ...(extra.nodeArgs ?? [])] }),
    );
  const serve = ['serve', '--host', '127.0.0.1', '--port', '0', ...options.serviceArgs];
  switch (role) {
    case 'service':
      return start(SERVICE_MAIN, serve, { ...leanServiceEnv(), ...options.serviceEnv, ...extra.env, DATABASE_URL: `sqlite:${database}` }, { nodeArgs: options.serviceNodeArgs });
    case 'service-pg':
      // `database` is a postgres:// URL here.
      return start(
        SERVICE_MAIN,
        serve,
        { ...leanServiceEnv(), ...options.serviceEnv, ...extra.env, DATABASE_URL: database, ...(extra.redisUrl === undefined ? {} : { REDIS_URL: extra.redisUrl }) },
        { nodeArgs: options.serviceNodeArgs },
      );
    case 'service-defaults':
      return start(
        SERVICE_MAIN,
        serve,
        { ...defaultServiceEnv(), METRICS_PORT: '0', DATABASE_URL: `sqlite:${database}` },
        { nodeArgs: options.serviceNodeArgs, stdoutFile: extra.stdoutFile ?? join(workspace.dir, `${name}.log`) },
      );
    case 'ceiling':
      return start(CEILING, [...peerArgs, '--accounts', workspace.accountsFile], cleanEnv());
    case 'ceiling+sqlite':
      return start(CEILING, [...peerArgs, '--accounts', workspace.accountsFile, '--sqlite', database], cleanEnv());
    case 'fastify':
      return start(FASTIFY, [...peerArgs, '--database', database], cleanEnv());
    case 'express':
      return start(EXPRESS, [...peerArgs, '--database', database], cleanEnv());
  }
}

/** What the service answers to each call: the bodies the others must match byte for byte, and its headers for them to copy. */
async function capture(server: ServerProcess, accounts: BenchAccounts, log: (line: string) => void) {
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

/**
 * Migrates a database with the service's own CLI, makes the bench accounts and `accounts` in all, then has the service answer
 * every call once on a throwaway copy: its bodies become the reference, its headers the template the ceiling copies.
 */
export async function prepareWorkspace(
  dir: string,
  accounts: number,
  options: Pick<BenchOptions, 'serviceArgs' | 'serviceNodeArgs'>,
  log: (line: string) => void,
): Promise<Workspace> {
  const base = databaseIn(dir, 'base');
  const benchAccounts = await createBenchDatabase(base, leanServiceEnv());
  growAccounts(base, accounts);
  const accountsFile = join(dir, 'accounts.json');
  writeFileSync(accountsFile, JSON.stringify(Object.values(benchAccounts).map((account) => ({ ...account, premium: true }))));
  const headersFile = join(dir, 'headers.json');
  const fleet = new Fleet();
  // The templates are not written yet: the service is the one server that does not read them.
  const workspace: Workspace = { dir, base, accounts: benchAccounts, accountsFile, headersFile, references: new Map() };
  const probe = await launch(fleet, workspace, 'service', options, { name: 'capture' });
  try {
    const reference = await capture(probe, benchAccounts, log);
    writeFileSync(headersFile, JSON.stringify(reference.templates));
    return { ...workspace, references: reference.answers };
  } finally {
    await fleet.stop(probe);
  }
}
