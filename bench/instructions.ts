// `npm run bench -- --instructions`: instructions per answer of each server under callgrind, for GET /hello (without and with
// credentials), GET /user and POST /settings. A count of instructions does not move with the machine's other load, so it shows a change too
// small for the CPU-time tables to tell from noise.
//
// Each server runs under `valgrind --tool=callgrind --trace-children=no` (the server's own process; its forked workers, if
// any, are not counted), with instrumentation off until the warm-up is done, so start-up and V8's first compilations cost
// no counting. Then, for each call, `callgrind_control` zeroes the counters, N requests are sent one after another on one
// keep-alive connection, the counters are dumped, zeroed again, and 3N requests sent and dumped. The difference of the two
// dumps is the cost of 2N answers: whatever a phase costs besides its answers (the commands themselves, the idle event loop,
// the connection's first read) is in both and falls out. That pair is repeated, and each figure is the median of the pairs.
//
// Callgrind writes one file per thread (--separate-threads=yes): thread 1 is the event loop that answers; the others are V8's
// background compiler and concurrent garbage collector, and libuv's pool. Both the main thread's count and the sum over
// every thread are reported; the background threads' share varies far more from pair to pair, because valgrind runs one
// thread at a time and schedules them differently from the kernel.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BENCH_CALLS, type BenchAccounts, type BenchCall, type CallId } from './calls.ts';
import { verify, type RequestPlan } from './load.ts';
import type { BenchOptions, InstructionOptions, InstructionServer } from './options.ts';
import type { ServerProcess } from './processes.ts';
import { describeMachine, type Machine } from './results.ts';
import { Fleet, launch, prepareWorkspace, type Workspace } from './servers.ts';

const run = promisify(execFile);

/**
 * The calls counted: GET /hello without and with credentials (authentication's own cost is their difference), GET /user, and
 * POST /settings (a write: its batch's commit runs on the main thread, the disk's wait is not an instruction).
 */
export const INSTRUCTION_CALLS: readonly CallId[] = ['hello', 'hello-auth', 'user', 'post-settings'];

/** How many times a pair is taken at most while its main-thread count comes out negative. */
const PAIR_ATTEMPTS = 3;

/** One N / 3N pair: instructions per answer from the difference of the two dumps. */
export interface PairCount {
  /** Thread 1, the event loop that answers. */
  readonly mainThread: number;
  /** Every thread of the process. */
  readonly allThreads: number;
}

export interface ServerCount {
  readonly server: InstructionServer;
  /** The pairs of each call, in the order taken. */
  readonly pairs: ReadonlyMap<CallId, readonly PairCount[]>;
  /** Why the server has no figures (it failed to start, answered wrongly, or valgrind failed); null when it has. */
  readonly problem: string | null;
  /** Wall-clock seconds under valgrind, start to stop. */
  readonly seconds: number;
}

export interface InstructionResults {
  readonly machine: Machine;
  readonly command: string;
  readonly smoke: boolean;
  readonly options: InstructionOptions;
  /** `valgrind --version`. */
  readonly valgrind: string;
  readonly calls: readonly BenchCall[];
  readonly servers: readonly ServerCount[];
}

/**
 * Sends a plan's request (with its `index`th body, for a write) on a keep-alive connection and checks the answer. A request
 * on a reused connection that the server reset is sent once more: callgrind_control can hold a phase for longer than the
 * server's keep-alive timeout, and a server slowed down by valgrind may close the idle connection just as the next request
 * goes out (Node's documented race, `request.reusedSocket`). One answer more in a phase of N shifts a figure by 1 / 2N.
 */
export async function ask(agent: Agent, plan: RequestPlan, index: number): Promise<void> {
  try {
    await askOnce(agent, plan, index);
  } catch (error) {
    if (!(error instanceof ResetOnReuse)) throw error;
    await askOnce(agent, plan, index);
  }
}

class ResetOnReuse extends Error {}

function askOnce(agent: Agent, plan: RequestPlan, index: number): Promise<void> {
  return new Promise((done, fail) => {
    const req = request(plan.url, { method: plan.call.method, headers: plan.headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.once('end', () => {
        if (res.statusCode !== plan.call.expectedStatus || !plan.answers.includes(body)) {
          fail(new Error(`${plan.call.label} answered ${res.statusCode}: ${body.slice(0, 200)}`));
        } else done();
      });
    });
    req.once('error', (error: NodeJS.ErrnoException) =>
      fail(req.reusedSocket && error.code === 'ECONNRESET' ? new ResetOnReuse(`${plan.call.label}: ${error.message}`) : error),
    );
    // Under valgrind one answer can take a second when the machine is busy; a minute means something is wrong.
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer to ${plan.call.label} within 60 s`)));
    const bodies = plan.call.bodies;
    req.end(bodies.length === 0 ? undefined : bodies[index % bodies.length]);
  });
}

async function askMany(agent: Agent, plan: RequestPlan, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await ask(agent, plan, i);
}

async function callgrindControl(args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run('callgrind_control', [...args], { timeout: 120_000 });
    if (!/OK/.test(stdout)) throw new Error(`callgrind_control ${args.join(' ')} said: ${stdout}`);
    return stdout;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('callgrind_control is not installed (Debian: apt-get install valgrind)');
    throw error;
  }
}

/** The "summary:" line of each thread's file of dump number `dump` (totals: when an older callgrind writes no summary). */
function readDumpNow(dir: string, pid: number, dump: number): PairCount {
  const prefix = `callgrind.out.${pid}.${dump}-`;
  const files = readdirSync(dir).filter((file) => file.startsWith(prefix));
  if (files.length === 0) throw new Error(`callgrind wrote no ${prefix}* in ${dir}`);
  let mainThread: number | null = null;
  let allThreads = 0;
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    const count = /^summary:\s*(\d+)/m.exec(text)?.[1] ?? /^totals:\s*(\d+)/m.exec(text)?.[1];
    if (count === undefined) throw new Error(`${file} has no summary: or totals: line`);
    allThreads += Number(count);
    if (file.endsWith('-01')) mainThread = Number(count);
  }
  if (mainThread === null) throw new Error(`no file for thread 1 among ${files.join(', ')}`);
  // Each file holds every function's cost: a few MB a thread, a few hundred MB a server if kept.
  for (const file of files) rmSync(join(dir, file));
  return { mainThread, allThreads };
}

/** The dump's counts, waiting a little should callgrind_control have answered before the files were complete. */
async function readDump(dir: string, pid: number, dump: number): Promise<PairCount> {
  for (let attempt = 1; ; attempt++) {
    try {
      return readDumpNow(dir, pid, dump);
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((done) => setTimeout(done, 200));
    }
  }
}

/** Counts one server: start under callgrind, warm up, then N / 3N pairs of each call. */
async function countServer(
  server: InstructionServer,
  workspace: Workspace,
  calls: readonly BenchCall[],
  options: BenchOptions,
  counting: InstructionOptions,
  fleet: Fleet,
  log: (line: string) => void,
): Promise<ServerCount> {
  const began = performance.now();
  // Its own directory: servers counted at the same time must not read (or remove) each other's dumps.
  const dir = join(workspace.dir, `callgrind-${server}`);
  mkdirSync(dir, { recursive: true });
  const pairs = new Map<CallId, PairCount[]>(calls.map((call) => [call.id, []]));
  const valgrind = [
    'valgrind',
    '--tool=callgrind',
    '--trace-children=no',
    '--separate-threads=yes',
    '--instr-atstart=no',
    '--dump-instr=no',
    '--dump-line=no',
    `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`,
  ];
  let running: ServerProcess | null = null;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    log(`  ${server}: starting under callgrind`);
    running = await launch(fleet, workspace, server, options, {
      name: `${server} (callgrind)`,
      wrapper: valgrind,
      readyTimeoutMs: 15 * 60_000,
      // Its counts are all in the dumps already: the final one, written at exit, would only cost time.
      stopSignal: 'SIGKILL',
    });
    const pid = running.pid;
    const plans = new Map<CallId, RequestPlan>();
    for (const call of calls) plans.set(call.id, await verify(running.url, call, workspace.accounts, workspace.references.get(call.id) ?? null));
    for (const call of calls) await askMany(agent, plans.get(call.id)!, counting.warmupRequests);
    await callgrindControl(['--instr=on', String(pid)]);
    // Counting on: valgrind translates the code afresh, and V8's background threads are still finishing what the warm-up
    // started; some answers of each call settle that before the first pair.
    for (const call of calls) await askMany(agent, plans.get(call.id)!, Math.min(counting.warmupRequests, 300));
    let dump = 0;
    const phase = async (plan: RequestPlan, count: number) => {
      await callgrindControl(['--zero', String(pid)]);
      await askMany(agent, plan, count);
      await callgrindControl(['--dump', String(pid)]);
      return await readDump(dir, pid, ++dump);
    };
    for (let repeat = 1; repeat <= counting.repeats; repeat++) {
      for (const call of calls) {
        const plan = plans.get(call.id)!;
        const answers = 2 * counting.requests;
        let pair: PairCount;
        // A negative count on the main thread is not a measure: work that is not the answers' (a compilation, a
        // collection) landed in the N phase and not the 3N one, which small phases (--smoke) allow. Such a pair is taken
        // again, at most PAIR_ATTEMPTS times.
        for (let attempt = 1; ; attempt++) {
          const once = await phase(plan, counting.requests);
          const thrice = await phase(plan, 3 * counting.requests);
          pair = { mainThread: (thrice.mainThread - once.mainThread) / answers, allThreads: (thrice.allThreads - once.allThreads) / answers };
          if (pair.mainThread >= 0 || attempt === PAIR_ATTEMPTS) break;
          log(`  ${server.padEnd(8)} ${call.label.padEnd(28)} pair ${repeat}: a negative count on the main thread, taken again`);
        }
        pairs.get(call.id)!.push(pair);
        log(`  ${server.padEnd(8)} ${call.label.padEnd(28)} pair ${repeat}: ${Math.round(pair.mainThread).toLocaleString('en-US')} instructions per answer on the main thread, ${Math.round(pair.allThreads).toLocaleString('en-US')} in all`);
      }
    }
    return { server, pairs, problem: null, seconds: (performance.now() - began) / 1000 };
  } catch (error) {
    const problem = `${server}: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`;
    log(`  ${problem}`);
    return { server, pairs, problem, seconds: (performance.now() - began) / 1000 };
  } finally {
    agent.destroy();
    if (running !== null) await fleet.stop(running);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function valgrindVersion(): Promise<string> {
  try {
    return (await run('valgrind', ['--version'])).stdout.trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
    throw error;
  }
}

export async function countInstructions(
  options: BenchOptions,
  counting: InstructionOptions,
  command: string,
  work: string,
  fleet: Fleet,
  log: (line: string) => void,
): Promise<InstructionResults> {
  const valgrind = await valgrindVersion();
  const machine = describeMachine(options.serviceNodeArgs);
  const wanted = options.calls === null ? INSTRUCTION_CALLS : INSTRUCTION_CALLS.filter((id) => options.calls!.includes(id));
  if (wanted.length === 0) throw new Error(`--calls names none of ${INSTRUCTION_CALLS.join(', ')} (the calls --instructions counts)`);
  const calls = BENCH_CALLS.filter((call) => wanted.includes(call.id));
  if (options.serviceArgs.includes('--workers')) log('  note: callgrind counts only the primary process (--trace-children=no), not its workers');
  log(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${valgrind}; work files in ${work}`);
  const workspace = await prepareWorkspace(work, options.accounts[0]!, options, log);
  log(
    `instructions: ${counting.warmupRequests} warm-up requests per call, then ${counting.repeats} pair(s) of ${counting.requests} and ` +
      `${3 * counting.requests} requests per call, ${counting.jobs} server(s) at a time`,
  );
  const results = new Map<InstructionServer, ServerCount>();
  const queue = [...counting.servers];
  const worker = async () => {
    for (let server = queue.shift(); server !== undefined; server = queue.shift()) {
      results.set(server, await countServer(server, workspace, calls, options, counting, fleet, log));
    }
  };
  await Promise.all(Array.from({ length: Math.min(counting.jobs, queue.length) }, worker));
  return {
    machine: { ...machine, loadAverageAtEnd: loadavg()[0]! },
    command,
    smoke: options.smoke,
    options: counting,
    valgrind,
    calls,
    servers: counting.servers.map((server) => results.get(server)!),
  };
}
