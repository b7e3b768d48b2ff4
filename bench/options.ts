// The bench's command line and environment: how long, how many connections and accounts, where the results go.
import { mkdtempSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SERVICE_NODE_FLAGS } from './processes.ts';

export interface BenchOptions {
  readonly smoke: boolean;
  /** Table 1: connections per run. */
  readonly connections: number;
  /** Seconds per measured run; a fraction only in the smoke run. */
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** wrk's threads. */
  readonly loadThreads: number;
  /** Table 2: connection counts for GET /user. */
  readonly scaleConnections: readonly number[];
  /** Table 2: accounts in the database, ascending; the first is also the size for table 1. */
  readonly accounts: readonly number[];
  /** Service starts timed for the start-up figure (median). */
  readonly starts: number;
  /** Every measurement is repeated this many times, servers taking turns; each cell is the median. */
  readonly rounds: number;
  /** Directory for results.md and results.svg. */
  readonly out: string;
  /** Appended to `account-api serve` (for instance `--workers 2` once the service has it). */
  readonly serviceArgs: readonly string[];
  /** Table 1 only these calls (ids as in calls.ts); null: all. */
  readonly calls: readonly string[] | null;
  /** Where the service of table 1 writes a CPU profile (node --cpu-prof); null: not profiled. */
  readonly profileDir: string | null;
  /**
   * Given to Node before the service's script (every service of both tables): npm start's Node flags, then --service-node-arg's,
   * e.g. --max-semi-space-size=4.
   */
  readonly serviceNodeArgs: readonly string[];
  /** Set in the service's environment (--service-env NAME=VALUE), e.g. KEY_USAGE_FLUSH_MS=0 to measure a step on and off. */
  readonly serviceEnv?: Readonly<Record<string, string>>;
  /** Instead of the load tables: instructions per answer under callgrind (instructions.md). */
  readonly instructions: InstructionOptions | null;
  /** Table 3, the service on PostgreSQL + Redis beside SQLite; null: not measured (--no-scale-out). */
  readonly scaleOut: ScaleOutOptions | null;
  /** Instead of the load tables: the service on PostgreSQL at growing sizes (bench/at-size.ts, at-size/results.md). */
  readonly atSize: AtSizeOptions | null;
}

export interface AtSizeOptions {
  /** Accounts in the one database, grown in these steps, ascending. */
  readonly accounts: readonly number[];
  /** Accounts drawn at random at each size to get real keys, which the spread GET /user sends in turn. */
  readonly sample: number;
  /** A superuser connection; the bench creates (and drops) a database of its own through it. */
  readonly postgresUrl: string;
}

export interface ScaleOutOptions {
  /** Accounts with real keys that the spread GET /user cycles through (each engine's database holds them all). */
  readonly accounts: number;
  /** A superuser connection to an existing database; the bench creates (and drops) a database of its own through it. */
  readonly postgresUrl: string;
  /** Seconds to wait for PostgreSQL's statistics before reading them, on both sides of a run. */
  readonly settleSeconds: number;
}

export interface InstructionOptions {
  /** N: each measured phase sends N, then 3N, requests of one call; the difference is 2N answers. */
  readonly requests: number;
  /** Requests of each call before counting starts (uninstrumented, so V8 has compiled the hot paths). */
  readonly warmupRequests: number;
  /** N / 3N pairs per call and server; the figure is their median. */
  readonly repeats: number;
  /** Which servers (service, ceiling, fastify, express). */
  readonly servers: readonly InstructionServer[];
  /** Servers under valgrind at the same time. */
  readonly jobs: number;
}

export const INSTRUCTION_SERVERS = ['service', 'ceiling', 'fastify', 'express'] as const;
export type InstructionServer = (typeof INSTRUCTION_SERVERS)[number];

export const USAGE = `npm run bench -- [options]     (or: node bench/run.ts [options])

  --duration S           seconds per measured wrk run          BENCH_DURATION      default 5
  --warmup S             seconds of warm-up before each run    BENCH_WARMUP        default 1
  --connections N        connections for table 1               BENCH_CONNECTIONS   default 64
  --load-threads N       wrk threads (-t)                      BENCH_LOAD_THREADS  default 1
  --scale-connections L  connections for table 2              BENCH_SCALE_CONNECTIONS default 1,16,64,256
  --accounts L           accounts for table 2 (first: table 1) BENCH_ACCOUNTS      default 1000,100000,1000000
  --starts N             timed service starts (median)         BENCH_STARTS        default 5
  --rounds N             repeat every measurement in turn, take medians  BENCH_ROUNDS  default 3
  --service-arg ARG      add ARG to \`account-api serve\` (repeatable), e.g. --service-arg=--workers --service-arg=2
  --calls L              table 1 only for these calls, e.g. user,timezones-304 (ids in bench/calls.ts)
  --profile DIR          the service of table 1 writes a CPU profile there (node --cpu-prof), for flame graphs
  --service-node-arg ARG give ARG to Node for the service (repeatable), after npm start's Node flags (which every server gets),
                         e.g. --service-node-arg=--max-semi-space-size=4
  --service-env NAME=V   set NAME=V in the service's environment (repeatable), e.g. --service-env=KEY_USAGE_FLUSH_MS=0 to
                         count a per-request step by turning it off in the same build
  --out DIR              where results.md and results.svg go   BENCH_OUT           default bench/ (smoke: a temp dir)
  --smoke                tiny numbers (~40 s) to check the bench itself works; its figures mean nothing

  table 3, the service on PostgreSQL + Redis beside SQLite (needs PostgreSQL and redis-server; said in results.md if absent):
  --scale-out-accounts N accounts with real keys the spread GET /user cycles through  BENCH_SCALE_OUT_ACCOUNTS  default 1000000
  --postgres URL         a superuser connection; the bench makes its own database     BENCH_POSTGRES_URL
                         default postgres://USER@127.0.0.1:5432/postgres
  --pg-settle S          seconds for PostgreSQL's statistics to be flushed, each side of a run  default 11 (smoke: 1)
  --no-scale-out         leave table 3 out

  --at-size              instead of the tables: the service on PostgreSQL + Redis at growing sizes (at-size/results.md)
  --at-size-accounts L   the sizes, one database grown in steps       default 1000,1000000,10000000 (smoke: 100,1000)
  --at-size-sample N     accounts drawn at random per size for real keys (the spread run's)  default 200000

  --instructions         instead of the tables: instructions per answer under callgrind (writes instructions.md)
  --requests N           N: each measured phase is N then 3N requests of one call   default 1000
  --warmup-requests N    requests of each call before counting starts              default 3000
  --repeats N            N / 3N pairs per call and server (median)                 default 3
  --servers L            servers to count, of service,ceiling,fastify,express      default all
  --jobs N               servers under valgrind at the same time                   default 2
`;

class UsageError extends Error {}

function positive(name: string, raw: string, integer: boolean): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name} must be a positive ${integer ? 'whole ' : ''}number; got '${raw}'`);
  }
  return value;
}

function serviceEnv(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
      if (match === null) throw new UsageError(`--service-env takes NAME=VALUE (an environment variable in capitals); got '${pair}'`);
      return [match[1]!, match[2]!];
    }),
  );
}

function list(name: string, raw: string): number[] {
  const values = raw.split(',').map((entry) => positive(name, entry.trim(), true));
  return [...new Set(values)].sort((a, b) => a - b);
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): BenchOptions | { usage: string } {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        'scale-connections': { type: 'string' },
        accounts: { type: 'string' },
        starts: { type: 'string' },
        rounds: { type: 'string' },
        out: { type: 'string' },
        'service-arg': { type: 'string', multiple: true },
        calls: { type: 'string' },
        profile: { type: 'string' },
        'service-node-arg': { type: 'string', multiple: true },
        'service-env': { type: 'string', multiple: true },
        smoke: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
        'load-threads': { type: 'string' },
        instructions: { type: 'boolean', default: false },
        requests: { type: 'string' },
        'warmup-requests': { type: 'string' },
        repeats: { type: 'string' },
        servers: { type: 'string' },
        jobs: { type: 'string' },
        'scale-out-accounts': { type: 'string' },
        postgres: { type: 'string' },
        'pg-settle': { type: 'string' },
        'no-scale-out': { type: 'boolean', default: false },
        'at-size': { type: 'boolean', default: false },
        'at-size-accounts': { type: 'string' },
        'at-size-sample': { type: 'string' },
      },
    });
    if (values.help) return { usage: USAGE };
    const smoke = values.smoke;
    const pick = (flag: string | undefined, variable: string, normal: string, small: string) => flag ?? env[variable] ?? (smoke ? small : normal);
    const warmup = Number(pick(values.warmup, 'BENCH_WARMUP', '1', '0'));
    if (!(warmup >= 0)) throw new UsageError(`--warmup must be 0 or more seconds`);
    const small = (flag: string | undefined, normal: string, tiny: string) => flag ?? (smoke ? tiny : normal);
    const servers = (values.servers ?? INSTRUCTION_SERVERS.join(',')).split(',').map((name) => name.trim());
    for (const server of servers) {
      if (!(INSTRUCTION_SERVERS as readonly string[]).includes(server)) {
        throw new UsageError(`--servers takes ${INSTRUCTION_SERVERS.join(', ')}; got '${server}'`);
      }
    }
    const postgresUrl = values.postgres ?? env.BENCH_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;
    const atSize = values['at-size'];
    return {
      smoke,
      connections: positive('--connections', pick(values.connections, 'BENCH_CONNECTIONS', '64', '4'), true),
      // A smoke run is ended by SIGINT after 0.3 s: wrk's own -d takes whole seconds only.
      durationSeconds: positive('--duration', pick(values.duration, 'BENCH_DURATION', '5', '0.3'), false),
      warmupSeconds: warmup,
      loadThreads: positive('--load-threads', pick(values['load-threads'], 'BENCH_LOAD_THREADS', '1', '1'), true),
      scaleConnections: list('--scale-connections', pick(values['scale-connections'], 'BENCH_SCALE_CONNECTIONS', '1,16,64,256', '1,4')),
      accounts: list('--accounts', pick(values.accounts, 'BENCH_ACCOUNTS', '1000,100000,1000000', '50,200')),
      starts: positive('--starts', pick(values.starts, 'BENCH_STARTS', '5', '1'), true),
      rounds: positive('--rounds', pick(values.rounds, 'BENCH_ROUNDS', '3', '1'), true),
      serviceArgs: values['service-arg'] ?? [],
      calls: values.calls === undefined ? null : values.calls.split(',').map((id) => id.trim()),
      profileDir: values.profile === undefined ? null : resolve(cwd, values.profile),
      // npm start's Node flags, then the run's own (a later V8 flag wins over an earlier one).
      serviceNodeArgs: [...SERVICE_NODE_FLAGS, ...(values['service-node-arg'] ?? [])],
      serviceEnv: serviceEnv(values['service-env'] ?? []),
      instructions: values.instructions
        ? {
            requests: positive('--requests', small(values.requests, '1000', '10'), true),
            warmupRequests: positive('--warmup-requests', small(values['warmup-requests'], '3000', '10'), true),
            repeats: positive('--repeats', small(values.repeats, '3', '1'), true),
            servers: servers as InstructionServer[],
            // Valgrind runs a process one thread at a time: two servers at once keep a 2-core machine busy. The smoke run
            // starts every server at once, since start-up under valgrind is most of its time.
            jobs: positive('--jobs', small(values.jobs, '2', String(servers.length)), true),
          }
        : null,
      scaleOut: values['no-scale-out']
        ? null
        : {
            accounts: positive('--scale-out-accounts', pick(values['scale-out-accounts'], 'BENCH_SCALE_OUT_ACCOUNTS', '1000000', '200'), true),
            postgresUrl,
            settleSeconds: Number(small(values['pg-settle'], '11', '1')),
          },
      atSize: atSize
        ? {
            accounts: list('--at-size-accounts', small(values['at-size-accounts'], '1000,1000000,10000000', '100,1000')),
            sample: positive('--at-size-sample', values['at-size-sample'] ?? '200000', true),
            postgresUrl,
          }
        : null,
      // A smoke run never overwrites the committed results unless told to.
      out: resolve(
        cwd,
        values.out ?? env.BENCH_OUT ?? (smoke ? mkdtempSync(join(tmpdir(), 'account-api-bench-smoke-')) : atSize ? join(import.meta.dirname, 'at-size') : import.meta.dirname),
      ),
    };
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      return { usage: `${(error as Error).message}\n\n${USAGE}` };
    }
    throw error;
  }
}
