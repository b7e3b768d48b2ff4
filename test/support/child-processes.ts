// Test support: the child processes test/support starts are registered, so none keeps a test file alive unseen: one still
// running when its test ends (a CLI run) or when its file ends (a server) is killed and reported as a failure, with its
// command line. Before this, a CLI run stuck at exit held `npm test` for 43 minutes (issue 36).
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, afterEach } from 'node:test';

/** `test`: one command a test awaits (runCli). `file`: may serve several tests, stopped in an after hook (startServer). */
export type ChildScope = 'test' | 'file';

interface Tracked {
  readonly commandLine: string;
  readonly scope: ChildScope;
}

/** Per test file (each runs in its own process under `node --test`), as node:test's hooks are. */
const running = new Map<ChildProcess, Tracked>();

/**
 * When a file ends its own after hooks are still to run (ours was registered first, at import), and they stop its servers:
 * leftovers get this long to exit before they are killed and reported. A hang bound, not a timing check (shorter in
 * test/unit/support/child-processes.test.ts's fixture).
 */
const FILE_END_GRACE_MS = Number(process.env.TEST_FILE_END_GRACE_MS ?? 60_000);

export function trackChild(child: ChildProcess, commandLine: readonly string[], scope: ChildScope): ChildProcess {
  running.set(child, { commandLine: commandLine.join(' '), scope });
  child.once('exit', () => running.delete(child));
  // A child that never started (ENOENT) has no exit to wait for.
  child.once('error', () => {
    if (child.pid === undefined) running.delete(child);
  });
  return child;
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function leftovers(scopes: readonly ChildScope[]): [ChildProcess, Tracked][] {
  return [...running].filter(([child, tracked]) => scopes.includes(tracked.scope) && isRunning(child));
}

/** SIGKILL each; the message names them (also on stderr: a test that already failed, by its timeout, reports only that). */
async function kill(left: readonly [ChildProcess, Tracked][], when: string): Promise<string> {
  await Promise.all(
    left.map(async ([child]) => {
      if (!isRunning(child)) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
  const message = `still running ${when}, killed:\n  ${left.map(([child, tracked]) => `pid ${child.pid}: ${tracked.commandLine}`).join('\n  ')}`;
  process.stderr.write(`test/support: ${message}\n`);
  return message;
}

/** A command a test ran must have ended with it. */
async function endTestLeftovers(): Promise<void> {
  const left = leftovers(['test']);
  if (left.length > 0) throw new Error(await kill(left, 'when its test ended'));
}

/** Returns at once, so the file's own after hooks run; a timer, cleared once every child has exited, does the rest. */
function endFileLeftovers(): void {
  const scopes: ChildScope[] = ['test', 'file'];
  if (leftovers(scopes).length === 0) return;
  const timer = setTimeout(() => {
    const left = leftovers(scopes);
    void kill(left, 'when its test file ended').then(() => {
      process.exitCode = 1;
    });
  }, FILE_END_GRACE_MS);
  for (const [child] of leftovers(scopes)) {
    child.once('exit', () => {
      if (leftovers(scopes).length === 0) clearTimeout(timer);
    });
  }
}

// Registered once, on the file's root test, when a test file first imports test/support.
afterEach(endTestLeftovers);
after(endFileLeftovers);
