// What one run of the bench measured, and the machine it ran on.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import type { BenchCall } from './calls.ts';
import type { Measurement } from './measurement.ts';
import { REPO_ROOT, type ResidentByKind } from './processes.ts';

/** A measurement, or why there is none (the server answered wrongly, or failed under load). */
export type Cell = { readonly ok: true; readonly value: Measurement } | { readonly ok: false; readonly problem: string };

export interface EndpointRow {
  readonly call: BenchCall;
  readonly service: Cell;
  /** For the writing calls, the ceiling that writes the row with node:sqlite. */
  readonly ceiling: Cell;
  readonly fastify: Cell;
  readonly express: Cell;
  /** For the writing calls only: the ceiling that keeps the write in memory. */
  readonly memoryCeiling: Cell | null;
}

/** The servers of table 1's columns, in order. */
export const PEERS = [
  { key: 'service', label: 'service' },
  { key: 'ceiling', label: 'ceiling' },
  { key: 'fastify', label: 'Fastify' },
  { key: 'express', label: 'Express' },
] as const satisfies readonly { key: keyof EndpointRow; label: string }[];

/** GET /user on the service at its default settings beside the same at the bench's lean ones. */
export interface DefaultSettingsRow {
  readonly call: BenchCall;
  readonly lean: Cell;
  readonly defaults: Cell;
  /** What "defaults" meant in this run, for the table's caption. */
  readonly description: string;
}

export interface ScaleRow {
  readonly accounts: number;
  /** By connection count, GET /user on the service. */
  readonly cells: ReadonlyMap<number, Cell>;
  /** Peak resident memory of the service over the whole run at this size (VmHWM), MB. */
  readonly peakRssMB: number | null;
}

export interface StartTimes {
  readonly accounts: number;
  readonly samplesMs: readonly number[];
}

export interface Machine {
  readonly date: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  readonly commit: string;
  /** What Node was given before the service's script (npm start's flags, then --service-node-arg). */
  readonly serviceNodeArgs: readonly string[];
  /** One-minute load average when the bench began and when it ended: other work on a shared machine shows here. */
  readonly loadAverage: number;
  readonly loadAverageAtEnd: number | null;
}

export interface RunSettings {
  readonly command: string;
  readonly smoke: boolean;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly loadThreads: number;
  readonly scaleConnections: readonly number[];
  /** Each cell is the median of this many measurements, servers taking turns. */
  readonly rounds: number;
}

/** Table 3, one call: the service on SQLite and on PostgreSQL + Redis. */
export interface ScaleOutRow {
  readonly call: BenchCall;
  readonly sqlite: Cell;
  /** The service's own CPU in the cell's figures; its PostgreSQL backends and redis-server in `value.scaleOut`. */
  readonly postgres: Cell;
  /** Round trips the service made to Redis per answer (Redis's count of client reads); null when it could not be counted. */
  readonly redisRoundTrips: number | null;
}

export type ScaleOutResults =
  | { readonly measured: false; readonly reason: string }
  | {
      readonly measured: true;
      readonly accounts: number;
      readonly settleSeconds: number;
      readonly seedingSeconds: { readonly sqlite: number; readonly postgres: number };
      /** PostgreSQL database growth per seeded account (its row, its key, their indexes), from pg_database_size. */
      readonly bytesPerAccount: number;
      readonly rows: readonly ScaleOutRow[];
    };

export interface BenchResults {
  readonly machine: Machine;
  readonly settings: RunSettings;
  readonly endpoints: readonly EndpointRow[];
  /** null when GET /user was not among the calls measured. */
  readonly defaultSettings: DefaultSettingsRow | null;
  /** Peak resident memory (VmHWM, MB) of each server over table 1, by server name. */
  readonly endpointPeakRssMB: ReadonlyMap<string, number | null>;
  /** Each server's resident memory by kind at the end of table 1 (its main process), by server name. */
  readonly endpointMemory: ReadonlyMap<string, ResidentByKind | null>;
  readonly scaling: readonly ScaleRow[];
  readonly startTimes: readonly StartTimes[];
  /** Table 3: the service on PostgreSQL + Redis beside the same on SQLite. */
  readonly scaleOut: ScaleOutResults;
}

function commitOf(): string {
  try {
    const git = (args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    // The bench's own results are outputs: a run over a tree where only they changed measured the commit itself.
    const outputs = ['results.md', 'results.svg', 'instructions.md'].map((name) => `:(exclude,glob)bench/**/${name}`);
    const dirty = git(['status', '--porcelain', '--untracked-files=no', '--', '.', ...outputs]) !== '';
    return `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export function describeMachine(serviceNodeArgs: readonly string[]): Machine {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // not Linux: os.cpus() said it
  }
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpu,
    cores: availableParallelism(),
    memoryGiB: totalmem() / 1024 ** 3,
    node: process.version,
    kernel: `${process.platform} ${release()}`,
    commit: commitOf(),
    serviceNodeArgs,
    loadAverage: loadavg()[0]!,
    loadAverageAtEnd: null,
  };
}

/** a / b in requests per second, or null when either is missing. */
export function ratio(a: Cell, b: Cell): number | null {
  return a.ok && b.ok && b.value.requestsPerSecond > 0 ? a.value.requestsPerSecond / b.value.requestsPerSecond : null;
}

/** `cheaper`'s CPU per answer over `dearer`'s (ceiling / service: 1 means as cheap as the ceiling), or null when either is missing. */
export function cpuRatio(cheaper: Cell, dearer: Cell): number | null {
  return cheaper.ok && dearer.ok && dearer.value.cpuMicrosPerAnswer > 0 ? cheaper.value.cpuMicrosPerAnswer / dearer.value.cpuMicrosPerAnswer : null;
}
