// CPU time a server has used, read from /proc: every thread of the process and of the processes it forked (--workers).
//
// The figure is the sum over threads of /proc/PID/task/TID/schedstat's first field: nanoseconds on CPU, kept exactly by the
// scheduler. /proc/PID/stat's utime + stime (which also counts threads that have exited) is read beside it, in clock ticks
// (getconf CLK_TCK, 100 here: 10 ms, too coarse for a short run on its own); when the two disagree by more than the ticks'
// rounding, a thread ended between the readings and took its schedstat with it, so that reading falls back to the ticks.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export type CpuSource = 'schedstat' | 'stat';

export interface CpuReading {
  /** The processes read: the server and its descendants. */
  readonly pids: readonly number[];
  /** Sum of schedstat's first field over every thread; null where /proc has no schedstat (a kernel without SCHED_INFO). */
  readonly schedstatNs: number | null;
  readonly userTicks: number;
  readonly systemTicks: number;
}

export interface CpuUsed {
  readonly ns: number;
  /** Where `ns` comes from. */
  readonly source: CpuSource;
  /** Of utime + stime over the interval, the share in the kernel (from /proc/PID/stat's tick sampling). */
  readonly systemShare: number | null;
}

let ticksPerSecond: number | null = null;

/** `getconf CLK_TCK`: the unit of utime and stime in /proc/PID/stat (100 on every Linux the bench has met). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses), numbered as in proc(5) from 3. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** `pid` and every process below it, found by the parent ids in /proc/*\/stat. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))?.[1]);
    if (Number.isInteger(parent)) children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

function threadsOnCpuNs(pid: number): number | null {
  let total = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  for (const task of tasks) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch (error) {
      // A thread that ended while we listed them: its time is gone from schedstat (the ticks still have it).
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null;
    }
  }
  return total;
}

/** What the process `pid` and its descendants have used so far. */
export function readCpu(pid: number, treeOf: (pid: number) => number[] = processTree): CpuReading {
  const pids = treeOf(pid);
  let schedstatNs: number | null = 0;
  let userTicks = 0;
  let systemTicks = 0;
  for (const each of pids) {
    const fields = statFields(each);
    if (fields === null) continue;
    // utime and stime are fields 14 and 15 of proc(5); fields[0] here is field 3.
    userTicks += Number(fields[11]);
    systemTicks += Number(fields[12]);
    const ns = threadsOnCpuNs(each);
    schedstatNs = schedstatNs === null || ns === null ? null : schedstatNs + ns;
  }
  return { pids, schedstatNs, userTicks, systemTicks };
}

/** CPU time used between two readings of the same server: schedstat's nanoseconds unless a thread or process ended between them. */
export function cpuBetween(before: CpuReading, after: CpuReading): CpuUsed {
  const nsPerTick = 1e9 / clockTicksPerSecond();
  const ticks = after.userTicks + after.systemTicks - (before.userTicks + before.systemTicks);
  const systemShare = ticks > 0 ? (after.systemTicks - before.systemTicks) / ticks : null;
  const samePids = before.pids.length === after.pids.length && before.pids.every((pid) => after.pids.includes(pid));
  if (before.schedstatNs !== null && after.schedstatNs !== null && samePids) {
    const ns = after.schedstatNs - before.schedstatNs;
    // Each reading of the ticks is rounded down by up to one tick per process: beyond that, a thread took its time away.
    const slack = (after.pids.length + 1) * nsPerTick;
    if (ticks * nsPerTick - ns <= slack) return { ns, source: 'schedstat', systemShare };
  }
  return { ns: ticks * nsPerTick, source: 'stat', systemShare };
}
