// Measuring servers in turn: each job verified, then loaded; the jobs of a group back to back, rounds rotating who goes first.
import type { BenchAccounts, BenchCall, CallId } from './calls.ts';
import { measure, verify, type LoadSettings, type RequestPlan } from './load.ts';
import { medianMeasurement, type Measurement, type Meter, type ScaleOutFigures } from './measurement.ts';
import type { ServerProcess } from './processes.ts';
import type { Cell } from './results.ts';

/** One measurement to take: a call on a server under a load. */
export interface Job {
  readonly key: string;
  /** Jobs compared with each other (one endpoint on every server, or one connection count on every size). */
  readonly group: string;
  readonly server: ServerProcess;
  readonly call: BenchCall;
  readonly settings: LoadSettings;
  /** Instead of verify(): how this job checks its server and plans its load (keys spread over many accounts). */
  readonly plan?: () => Promise<RequestPlan>;
  /** Read around the measured run besides the server's own CPU (the scale-out table's engines). */
  readonly meter?: Meter<ScaleOutFigures>;
}

/** The end of what a server wrote, short enough for a table's footnote. */
export function lastWords(server: ServerProcess): string {
  return server.output
    .slice(-3)
    .map((line) => (line.length > 200 ? `${line.slice(0, 200)}...` : line))
    .join(' / ');
}

function describe(cell: Cell): string {
  if (!cell.ok) return `WRONG: ${cell.problem.split('\n')[0]}`;
  const { requestsPerSecond, cpuMicrosPerAnswer, p50Ms, p99Ms, loadGeneratorCores } = cell.value;
  const rate = Math.round(requestsPerSecond).toLocaleString('en-US').padStart(7);
  return `${rate} req/s  ${cpuMicrosPerAnswer.toFixed(1).padStart(6)} µs CPU/answer  p50 ${p50Ms.toFixed(2)} ms  p99 ${p99Ms.toFixed(2)} ms  wrk ${loadGeneratorCores.toFixed(2)} cores`;
}

/** Verifies, then measures, one call on one server; a wrong answer is recorded instead of a measurement. */
async function measureOne(
  job: Job,
  accounts: BenchAccounts,
  reference: readonly string[] | null,
  scriptDir: string,
  log: (line: string) => void,
): Promise<Cell> {
  let cell: Cell;
  try {
    const plan = job.plan === undefined ? await verify(job.server.url, job.call, accounts, reference) : await job.plan();
    cell = { ok: true, value: await measure(plan, job.settings, job.server.pid, scriptDir, job.server.name, job.meter) };
  } catch (error) {
    cell = { ok: false, problem: `${job.server.name}: ${(error as Error).message}` };
  }
  const exit = job.server.exit();
  if (exit !== null) cell = { ok: false, problem: `${job.server.name} ${exit} during ${job.call.label}; it last wrote: ${lastWords(job.server)}` };
  log(`  ${job.server.name.padEnd(16)} ${`${job.call.label} @${job.settings.connections}`.padEnd(36)} ${describe(cell)}`);
  return cell;
}

/**
 * The jobs of each group in turn, the group's first job moving one place each round: whoever is measured first (or last)
 * in a group does not stay so, so drift within a group (the machine warming, the bench's own garbage) favours no server.
 */
export function inRoundOrder<T extends { readonly group: string }>(jobs: readonly T[], round: number): T[] {
  const groups = new Map<string, T[]>();
  for (const job of jobs) groups.set(job.group, [...(groups.get(job.group) ?? []), job]);
  return [...groups.values()].flatMap((members) => {
    const shift = (round - 1) % members.length;
    return [...members.slice(shift), ...members.slice(0, shift)];
  });
}

/**
 * Takes every job in turn, `rounds` times over, so servers compared with each other are measured seconds apart and drift in
 * the machine's other load hits them alike. Each cell is the median of its rounds; one wrong answer makes it wrong.
 */
export async function measureInTurn(
  jobs: readonly Job[],
  rounds: number,
  accounts: BenchAccounts,
  references: ReadonlyMap<CallId, readonly string[]>,
  scriptDir: string,
  log: (line: string) => void,
): Promise<Map<string, Cell>> {
  const samples = new Map<string, Measurement[]>();
  const problems = new Map<string, string>();
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) log(`  round ${round} of ${rounds}`);
    for (const job of inRoundOrder(jobs, round)) {
      if (problems.has(job.key)) continue;
      const cell = await measureOne(job, accounts, references.get(job.call.id) ?? null, scriptDir, log);
      if (cell.ok) samples.set(job.key, [...(samples.get(job.key) ?? []), cell.value]);
      else problems.set(job.key, cell.problem);
    }
  }
  const cells = new Map<string, Cell>();
  for (const job of jobs) {
    const problem = problems.get(job.key);
    cells.set(job.key, problem !== undefined ? { ok: false, problem } : { ok: true, value: medianMeasurement(samples.get(job.key) ?? []) });
  }
  return cells;
}
