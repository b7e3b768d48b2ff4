// Test support: another process holding SQLite's write lock on a workspace's database (test/support/hold-sqlite-lock.ts),
// released when the test says so.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { trackChild } from './child-processes.ts';
import { HANG_MS } from './eventually.ts';
import type { Workspace } from './server-process.ts';

export interface LockHold {
  /** Resolves with Date.now() in the holding process just before its COMMIT: everything before it ran under the lock. */
  readonly releasing: Promise<number>;
  readonly exited: Promise<number | null>;
  /** Lets go of the lock once it has been held its HOLD_MS (at HANG_MS at the latest, so a hung test still ends). */
  release(): void;
}

/** Starts test/support/hold-sqlite-lock.ts on the workspace's database; resolves once it holds the write lock. */
export function holdWriteLock(workspace: Workspace, holdMs: number): Promise<LockHold> {
  const args = [join(import.meta.dirname, 'hold-sqlite-lock.ts'), join(workspace.dir, 'live.db'), String(holdMs)];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  trackChild(child, [process.execPath, ...args], 'file');
  const release = () => {
    if (!child.stdin.writableEnded) child.stdin.end('release\n');
  };
  setTimeout(release, HANG_MS).unref();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const events = new Map<string, (at: number) => void>();
  const event = (name: string) => new Promise<number>((done) => events.set(name, done));
  const locked = event('locked');
  const releasing = event('releasing');
  createInterface({ input: child.stdout }).on('line', (line) => {
    const { event: name, at } = JSON.parse(line) as { event: string; at: number };
    events.get(name)?.(at);
  });
  return Promise.race([
    locked.then(() => ({ releasing, exited, release })),
    exited.then((code) => Promise.reject(new Error(`the lock holder exited with ${code} before it held the lock:\n${stderr}`))),
  ]);
}
