// The bench's command line and environment: how long, how many connections and accounts, where the results go.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

export interface BenchOptions {
  readonly smoke: boolean;
  /** Table 1: connections per run. */
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** Requests per run instead of a duration (smoke); null: timed runs. */
  readonly amount: number | null;
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
  /** Given to Node before the service's script (every service of both tables), e.g. --max-semi-space-size=4. */
  readonly serviceNodeArgs: readonly string[];
}

export const USAGE = `npm run bench -- [options]     (or: node bench/run.ts [options])

  --duration S           seconds per measured run              BENCH_DURATION      default 5
  --warmup S             seconds of warm-up before each run    BENCH_WARMUP        default 1
  --connections N        connections for table 1               BENCH_CONNECTIONS   default 64
  --scale-connections L  connections for table 2              BENCH_SCALE_CONNECTIONS default 1,16,64,256
  --accounts L           accounts for table 2 (first: table 1) BENCH_ACCOUNTS      default 1000,100000,1000000
  --starts N             timed service starts (median)         BENCH_STARTS        default 5
  --rounds N             repeat every measurement, take medians BENCH_ROUNDS       default 1
  --service-arg ARG      add ARG to \`account-api serve\` (repeatable), e.g. --service-arg=--workers --service-arg=2
  --calls L              table 1 only for these calls, e.g. user,timezones-304 (ids in bench/calls.ts)
  --profile DIR          the service of table 1 writes a CPU profile there (node --cpu-prof), for flame graphs
  --service-node-arg ARG give ARG to Node for the service (repeatable), e.g. --service-node-arg=--max-semi-space-size=4
  --out DIR              where results.md and results.svg go   BENCH_OUT           default bench/ (smoke: a temp dir)
  --smoke                tiny numbers (~20 s) to check the bench itself works; its figures mean nothing
`;

class UsageError extends Error {}

function positive(name: string, raw: string, integer: boolean): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name} must be a positive ${integer ? 'whole ' : ''}number; got '${raw}'`);
  }
  return value;
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
        smoke: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
    if (values.help) return { usage: USAGE };
    const smoke = values.smoke;
    const pick = (flag: string | undefined, variable: string, normal: string, small: string) => flag ?? env[variable] ?? (smoke ? small : normal);
    const warmup = Number(pick(values.warmup, 'BENCH_WARMUP', '1', '0'));
    if (!(warmup >= 0)) throw new UsageError(`--warmup must be 0 or more seconds`);
    return {
      smoke,
      connections: positive('--connections', pick(values.connections, 'BENCH_CONNECTIONS', '64', '4'), true),
      durationSeconds: positive('--duration', pick(values.duration, 'BENCH_DURATION', '5', '1'), false),
      warmupSeconds: warmup,
      amount: smoke ? 40 : null,
      scaleConnections: list('--scale-connections', pick(values['scale-connections'], 'BENCH_SCALE_CONNECTIONS', '1,16,64,256', '1,4')),
      accounts: list('--accounts', pick(values.accounts, 'BENCH_ACCOUNTS', '1000,100000,1000000', '50,200')),
      starts: positive('--starts', pick(values.starts, 'BENCH_STARTS', '5', '1'), true),
      rounds: positive('--rounds', pick(values.rounds, 'BENCH_ROUNDS', '1', '1'), true),
      serviceArgs: values['service-arg'] ?? [],
      calls: values.calls === undefined ? null : values.calls.split(',').map((id) => id.trim()),
      profileDir: values.profile === undefined ? null : resolve(cwd, values.profile),
      serviceNodeArgs: values['service-node-arg'] ?? [],
      // A smoke run never overwrites the committed results unless told to.
      out: resolve(cwd, values.out ?? env.BENCH_OUT ?? (smoke ? mkdtempSync(join(tmpdir(), 'account-api-bench-smoke-')) : import.meta.dirname)),
    };
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      return { usage: `${(error as Error).message}\n\n${USAGE}` };
    }
    throw error;
  }
}
