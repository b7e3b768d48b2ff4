// What one run of the bench measured, and the machine it ran on.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import type { BenchCall } from './calls.ts';
import type { Measurement } from './load.ts';
import { REPO_ROOT, type ResidentByKind } from './processes.ts';
import { medianScaleOut } from './scale-out-meter.ts';
import type { ScaleOutResults } from './scale-out.ts';

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

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** a / b in requests per second, or null when either is missing. */
export function ratio(a: Cell, b: Cell): number | null {
  return a.ok && b.ok && b.value.requestsPerSecond > 0 ? a.value.requestsPerSecond / b.value.requestsPerSecond : null;
}

/** `cheaper`'s CPU per answer over `dearer`'s (ceiling / service: 1 means as cheap as the ceiling), or null when either is missing. */
export function cpuRatio(cheaper: Cell, dearer: Cell): number | null {
  return cheaper.ok && dearer.ok && dearer.value.cpuMicrosPerAnswer > 0 ? cheaper.value.cpuMicrosPerAnswer / dearer.value.cpuMicrosPerAnswer : null;
}

/** The median of each figure over the rounds; the CPU source is 'stat' if any round had to fall back to it. */
export function medianMeasurement(taken: readonly Measurement[]): Measurement {
  const of = (figure: (one: Measurement) => number) => median(taken.map(figure));
  const shares = taken.flatMap((one) => (one.systemShare === null ? [] : [one.systemShare]));
  return {
    requestsPerSecond: of((one) => one.requestsPerSecond),
    p50Ms: of((one) => one.p50Ms),
    p99Ms: of((one) => one.p99Ms),
    responses: taken.reduce((sum, one) => sum + one.responses, 0),
    cpuMicrosPerAnswer: of((one) => one.cpuMicrosPerAnswer),
    cpuSource: taken.some((one) => one.cpuSource === 'stat') ? 'stat' : 'schedstat',
    systemShare: shares.length === 0 ? null : median(shares),
    serverCores: of((one) => one.serverCores),
    // The busiest round: what matters is whether wrk ever came near a whole core.
    loadGeneratorCores: Math.max(...taken.map((one) => one.loadGeneratorCores)),
    ...(taken[0]?.scaleOut === undefined ? {} : { scaleOut: medianScaleOut(taken.map((one) => one.scaleOut!)) }),
  };
}
