// What one run of the bench measured, and the machine it ran on.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import type { BenchCall } from './calls.ts';
import type { Measurement } from './load.ts';
import { REPO_ROOT } from './processes.ts';

/** A measurement, or why there is none (the server answered wrongly, or failed under load). */
export type Cell = { readonly ok: true; readonly value: Measurement } | { readonly ok: false; readonly problem: string };

export interface EndpointRow {
  readonly call: BenchCall;
  readonly service: Cell;
  /** For the writing calls, the ceiling that writes the row with node:sqlite. */
  readonly ceiling: Cell;
  readonly express: Cell;
  /** For the writing calls only: the ceiling that keeps the write in memory. */
  readonly memoryCeiling: Cell | null;
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
  /** One-minute load average when the bench began and when it ended: other work on a shared machine shows here. */
  readonly loadAverage: number;
  readonly loadAverageAtEnd: number | null;
}

export interface RunSettings {
  readonly command: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly amount: number | null;
  readonly scaleConnections: readonly number[];
  /** Each cell is the median of this many measurements, servers taking turns. */
  readonly rounds: number;
}

export interface BenchResults {
  readonly machine: Machine;
  readonly settings: RunSettings;
  readonly endpoints: readonly EndpointRow[];
  /** Peak resident memory (VmHWM, MB) of each server over table 1, by server name. */
  readonly endpointPeakRssMB: ReadonlyMap<string, number | null>;
  readonly scaling: readonly ScaleRow[];
  readonly startTimes: readonly StartTimes[];
}

function commitOf(): string {
  try {
    const git = (args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain']) === '' ? '' : ' with uncommitted changes'}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export function describeMachine(): Machine {
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
