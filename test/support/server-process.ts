// Test support: runs the real account-api server and CLI as child processes on a fresh SQLite file.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { trackChild } from './child-processes.ts';
import { POOLER_ENV } from './through-pooler.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const MAIN = join(REPO_ROOT, 'src/main.ts');
const STARTUP_HANG_MS = 180_000;

export interface Workspace {
  readonly dir: string;
  /** Environment for both server and CLI: a fresh live and sandbox database in `dir`. */
  readonly env: NodeJS.ProcessEnv;
  cleanup(): void;
}

export function createWorkspace(extraEnv: NodeJS.ProcessEnv = {}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-test-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: `sqlite:${join(dir, 'live.db')}`,
    SANDBOX_DATABASE_URL: `sqlite:${join(dir, 'sandbox.db')}`,
    LOG_LEVEL: 'info',
    // Every test talks from 127.0.0.1: budgets this large never trip unless a test sets its own.
    RATE_LIMIT_PER_KEY: '1000000',
    RATE_LIMIT_PER_ADDRESS: '1000000',
    RATE_LIMIT_AUTH_FAILURES: '1000000',
    // Tests run four files at once on two cores: load shedding would answer 503 at random. The overload test sets its own.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    // Likewise the engines' waits: on a loaded machine a request can wait more than the default 2 s for one of the pool's
    // connections (the pool's connect timeout bounds that wait too) and be answered 503 store_unavailable, rightly, but
    // not what a test of something else expects. Tests of these timeouts (postgres-outage, postgres-startup, sqlite-lock) set their own.
    PG_CONNECT_TIMEOUT_MS: '30000',
    PG_STATEMENT_TIMEOUT_MS: '60000',
    SQLITE_BUSY_TIMEOUT_MS: '30000',
    // And the drain at SIGTERM: past it the server exits 1, which a test of something else must not see because the machine
    // was slow. The shutdown and workers tests of it set their own.
    SHUTDOWN_TIMEOUT_MS: '120000',
    // A suite rerun through PgBouncer (pgbouncer.test.ts) tells every server and CLI run so.
    ...POOLER_ENV,
    ...extraEnv,
  };
  return { dir, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command to its end, collecting what it prints. Registered (child-processes.ts): one that outlives its test is ended
 * and reported, never waited on.
 */
export function runCommand(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }, shown: readonly string[] = [command, ...args]): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(child, shown, 'test');
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Runs `account-api ARGS...` exactly as an operator would (with the pinned Node). */
export function runCli(workspace: Workspace, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCommand(process.execPath, [MAIN, ...args], { cwd: workspace.dir, env: { ...workspace.env, ...env } }, ['account-api', ...args]);
}

/** Like runCli, but fails the test with the command's stderr when it does not exit 0. */
export async function cliOk(workspace: Workspace, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runCli(workspace, args, env);
  if (result.code !== 0) {
    throw new Error(`account-api ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
  }
  return result.stdout;
}

/** What a CLI run printed, for an assertion's message. */
export function describeRun(args: readonly string[], result: CliResult): string {
  return `account-api ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/** Runs `account-api ARGS...` and fails the test, saying what it printed, unless it exits with `code`. */
export async function expectCliExit(workspace: Workspace, args: readonly string[], code: number, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const result = await runCli(workspace, args, env);
  assert.equal(result.code, code, `expected exit ${code}; ${describeRun(args, result)}`);
  return result;
}

/** The `{"error": {code, message}}` that --json promises on stderr. */
export function cliJsonError(result: CliResult): { code: string; message: string } {
  try {
    return JSON.parse(result.stderr).error;
  } catch {
    throw new Error(`--json error output is not JSON: ${result.stderr}`);
  }
}

export interface Account {
  readonly username: string;
  readonly key: string;
}

/** Creates an account (Premium unless told otherwise) and one API key, through the real CLI. */
export async function createAccount(
  workspace: Workspace,
  username: string,
  options: { premium?: boolean; name?: string; timezone?: string; sandbox?: boolean } = {},
): Promise<Account> {
  const args = ['users', 'create', username];
  if (options.premium !== false) args.push('--premium');
  if (options.name !== undefined) args.push('--name', options.name);
  if (options.timezone !== undefined) args.push('--timezone', options.timezone);
  if (options.sandbox === true) args.push('--sandbox');
  await cliOk(workspace, args);
  const key = (await cliOk(workspace, ['keys', 'create', username, ...(options.sandbox === true ? ['--sandbox'] : [])])).trim();
  return { username, key };
}

export interface ServerProcess {
  readonly url: string;
  /** `${url}/api/v0` */
  readonly api: string;
  readonly child: ChildProcess;
  /** Every line the server wrote to stdout and stderr so far. */
  readonly output: string[];
  /** SIGTERM, then wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Starts `account-api serve` on a free port and resolves once it has logged that it is ready. `command` runs it (by default
 * this Node on src/main.ts; e.g. `[process.execPath, '--some-node-flag', MAIN]`).
 */
export function startServer(
  workspace: Workspace,
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
  command: readonly [string, ...string[]] = [process.execPath, MAIN],
): Promise<ServerProcess> {
  const commandLine = [...command.slice(1), 'serve', '--host', '127.0.0.1', '--port', '0', ...args];
  const child = spawn(command[0], commandLine, {
    cwd: workspace.dir,
    env: { ...workspace.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Ended and reported if still running once its file's after hooks are done (child-processes.ts).
  trackChild(child, [command[0], ...commandLine], 'file');
  const output: string[] = [];
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));

  return new Promise((done, fail) => {
    // A hang detector, not a timing check: on a machine busy with other work a start can take many seconds, and only a
    // server that never becomes ready should fail here (well inside the suite's per-test timeout, with its output).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`server did not become ready in ${STARTUP_HANG_MS / 1000} s:\n${output.join('\n')}`));
    }, STARTUP_HANG_MS);
    exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${code} before it was ready:\n${output.join('\n')}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => output.push(line));
    // The server says where it listens on stderr whatever LOG_LEVEL is.
    createInterface({ input: child.stderr! }).on('line', (line) => {
      output.push(line);
      const url = /^account-api listening at (\S+)/.exec(line)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      done({
        url,
        api: `${url}/api/v0`,
        child,
        output,
        exited,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          return exited;
        },
        kill: async () => {
          if (child.exitCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    });
  });
}

/** Waits for a server started with startServer to fail, returning its exit code and output. */
export async function expectStartFailure(workspace: Workspace, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}) {
  try {
    const server = await startServer(workspace, args, env);
    await server.stop();
    throw new Error('server started, but it was expected to refuse');
  } catch (error) {
    return (error as Error).message;
  }
}
