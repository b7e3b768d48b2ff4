// Starting and stopping the servers under test as child processes, and what the bench reads from them: memory, start time.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { processTree } from './cpu-time.ts';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO_ROOT = resolve(import.meta.dirname, '..');
export const SERVICE_MAIN = join(REPO_ROOT, 'src/main.ts');

/**
 * The Node flags of `npm start` (`node FLAGS src/main.ts serve`), which the systemd unit gives through NODE_OPTIONS (a test holds
 * the two equal): every server of the bench runs with them, so that the bench measures the service as it is run, and compares
 * its code, not its Node settings, with the others'. E.g. `--max-semi-space-size=32`.
 */
export function startScriptNodeFlags(script: string): string[] {
  const words = /^node(?<flags>(?: --[a-z][a-z0-9-]*(?:=[A-Za-z0-9._-]+)?)*) src\/main\.ts serve$/.exec(script);
  if (words === null) throw new Error(`npm start should be 'node [--flag[=value] ...] src/main.ts serve'; it is '${script}'`);
  return words.groups!.flags!.split(' ').filter((flag) => flag !== '');
}

export const SERVICE_NODE_FLAGS: readonly string[] = startScriptNodeFlags(
  (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start,
);

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** The last lines it wrote, for error messages. */
  readonly output: string[];
  /** How it ended, while it has not been stopped by the bench: null while it runs. */
  exit(): string | null;
  stop(): Promise<void>;
}

const KEEP_LINES = 40;
const READY_TIMEOUT_MS = 60_000;

function collect(child: ChildProcess, output: string[], onLine?: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      if (output.length > KEEP_LINES) output.shift();
      onLine?.(line);
    });
  }
}

/** `signal` (SIGTERM), then SIGKILL if it has not exited within `graceMs`. */
function stopper(child: ChildProcess, graceMs = 10_000, signal: NodeJS.Signals = 'SIGTERM'): () => Promise<void> {
  const exited = new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once('exit', () => done());
  });
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
}

export interface StartOptions {
  /** Given to Node before the script. */
  readonly nodeArgs?: readonly string[];
  /** A command the server runs under (valgrind and its options); the server's pid is still the one the bench reads. */
  readonly wrapper?: readonly string[];
  /** Where the server's stdout goes (its request log at LOG_LEVEL=info) instead of the bench's pipe. */
  readonly stdoutFile?: string;
  /** How long it may take to start and to stop (under valgrind, much longer than the default minute and ten seconds). */
  readonly readyTimeoutMs?: number;
  readonly stopGraceMs?: number;
  /** How it is asked to stop: SIGTERM, or SIGKILL when how it ends does not matter (under callgrind, whose final dump is not read). */
  readonly stopSignal?: NodeJS.Signals;
}

/**
 * Runs `node [NODE_ARGS] SCRIPT ARGS` (with this same Node, under `wrapper` if given) and resolves once it says
 * `... listening at URL`.
 */
export function startServer(
  name: string,
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: StartOptions = {},
): Promise<ServerProcess> {
  const command = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), script, ...args];
  const stdout = options.stdoutFile === undefined ? 'pipe' : openSync(options.stdoutFile, 'a');
  const child = spawn(command[0]!, command.slice(1), { cwd: REPO_ROOT, env, stdio: ['ignore', stdout, 'pipe'] });
  if (typeof stdout === 'number') closeSync(stdout);
  const output: string[] = [];
  const stop = stopper(child, options.stopGraceMs, options.stopSignal);
  const readyTimeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      void stop();
      fail(new Error(`${name} did not say it was listening within ${readyTimeoutMs / 1000} s:\n${output.join('\n')}`));
    }, readyTimeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${output.join('\n')}`));
    });
    child.once('error', fail);
    collect(child, output, (line) => {
      const url = /listening at (http:\/\/\S+)/.exec(line)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      const exit = () => (child.exitCode === null && child.signalCode === null ? null : `exited with ${child.exitCode ?? child.signalCode}`);
      done({ name, url, pid: child.pid!, output, exit, stop });
    });
  });
}

/** Runs `node SCRIPT ARGS` to the end; rejects with its output when it exits non-zero. */
export function runToEnd(script: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => {
      if (code === 0) done(stdout);
      else fail(new Error(`node ${script} ${args.join(' ')} exited ${code}:\n${stderr}${stdout}`));
    });
  });
}

/** /proc says kB and means KiB; the bench reports MB (10^6 bytes). */
const kibToMB = (kib: number) => (kib * 1024) / 1e6;

/** Resident memory of a running process in MB (10^6 bytes): now (VmRSS) and its peak so far (VmHWM). */
export function residentMemory(pid: number): { currentMB: number; peakMB: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mb = (field: string) => kibToMB(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN));
    return { currentMB: mb('VmRSS'), peakMB: mb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * A process's resident memory split by what holds it, in MB (10^6 bytes), from /proc/PID/smaps: where a server's megabytes go.
 * `mallocArenas` are glibc's arenas for threads other than the main one: anonymous mappings at a 64 MiB boundary (glibc's
 * HEAP_MAX_SIZE on 64-bit) that, with the inaccessible rest of their reservation after them, span exactly 64 MiB.
 */
export interface ResidentByKind {
  /** Node's binary and the libraries and files mapped from disk. */
  readonly filesMB: number;
  /** glibc's main heap ([heap], grown by brk): what the main thread allocates with malloc (SQLite, V8's parser, buffers). */
  readonly mallocMainMB: number;
  readonly mallocArenasMB: number;
  /** Every other anonymous mapping: V8's heap above all, thread stacks, allocations large enough to be mapped alone. */
  readonly otherAnonymousMB: number;
}

const ARENA_SPAN = 64 * 1024 * 1024;

/** Splits the text of /proc/PID/smaps by kind (see ResidentByKind). */
export function residentByKind(smaps: string): ResidentByKind {
  const regions: { start: number; end: number; perms: string; path: string; rssKiB: number }[] = [];
  for (const line of smaps.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+ *(.*)$/.exec(line);
    if (head !== null) {
      regions.push({ start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, path: head[4]!, rssKiB: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null && regions.length > 0) regions.at(-1)!.rssKiB = Number(rss[1]);
  }
  const kib = { files: 0, mallocMain: 0, mallocArenas: 0, otherAnonymous: 0 };
  regions.forEach((region, i) => {
    const next = regions[i + 1];
    const arena =
      region.path === '' &&
      region.start % ARENA_SPAN === 0 &&
      (region.end - region.start === ARENA_SPAN ||
        (next !== undefined && next.path === '' && next.perms.startsWith('---') && next.start === region.end && next.end - region.start === ARENA_SPAN));
    const kind = region.path.startsWith('/') ? 'files' : region.path === '[heap]' ? 'mallocMain' : arena ? 'mallocArenas' : 'otherAnonymous';
    kib[kind] += region.rssKiB;
  });
  return {
    filesMB: kibToMB(kib.files),
    mallocMainMB: kibToMB(kib.mallocMain),
    mallocArenasMB: kibToMB(kib.mallocArenas),
    otherAnonymousMB: kibToMB(kib.otherAnonymous),
  };
}

/** residentByKind of a running process; null when it cannot be read (gone, or not Linux). */
export function residentByKindOf(pid: number): ResidentByKind | null {
  try {
    return residentByKind(readFileSync(`/proc/${pid}/smaps`, 'utf8'));
  } catch {
    return null;
  }
}

/** Peak resident memory (VmHWM) in MB of `pid` and the processes it forked (--workers), summed: each at its own peak. */
export function peakResidentMemoryOfTree(pid: number): number | null {
  const peaks = processTree(pid).map((each) => residentMemory(each)?.peakMB ?? null);
  return peaks[0] === null ? null : peaks.reduce<number>((sum, peak) => sum + (peak ?? 0), 0);
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

function statusOf(url: string): Promise<number | null> {
  return new Promise((done) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.once('end', () => done(res.statusCode ?? null));
    });
    req.once('error', () => done(null));
    req.end();
  });
}

/**
 * Milliseconds from spawning the service to its first 200 on GET /api/v0/hello (polled every 2 ms), then stops it.
 * `args` must make it listen on `port`.
 */
export async function timeToFirstAnswer(
  args: readonly string[],
  port: number,
  env: NodeJS.ProcessEnv,
  nodeArgs: readonly string[] = [],
): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, SERVICE_MAIN, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  collect(child, output);
  const stop = stopper(child);
  try {
    while (true) {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) while starting:\n${output.join('\n')}`);
      if ((await statusOf(`http://127.0.0.1:${port}/api/v0/hello`)) === 200) return performance.now() - started;
      if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`no answer within ${READY_TIMEOUT_MS / 1000} s:\n${output.join('\n')}`);
      await new Promise((done) => setTimeout(done, 2));
    }
  } finally {
    await stop();
  }
}
