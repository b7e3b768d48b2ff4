// Test support for the bench's tests: are wrk and valgrind here (skip plainly if not, fail in CI), and running bench/run.ts.
import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** Undefined when every command answers; otherwise why the tests skip. In CI a missing tool is a failure, never a skip. */
export function toolsSkipReason(commands: readonly (readonly [command: string, debianPackage: string])[]): string | undefined {
  const missing = commands.filter(([command]) => (spawnSync(command, ['--version'], { stdio: 'ignore' }).error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT');
  if (missing.length === 0) return undefined;
  const packages = [...new Set(missing.map(([, debianPackage]) => debianPackage))].join(' ');
  const reason = `${missing.map(([command]) => command).join(' and ')} not installed (Debian: apt-get install ${packages}); the bench needs it`;
  if (process.env.CI) throw new Error(`${reason}. CI must run these tests (.ci/run installs it).`);
  return reason;
}

/** Runs `node bench/run.ts ARGS` to the end, stdout and stderr together. */
export function runBench(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  // The caller's BENCH_* settings must not turn the smoke run into a long one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BENCH_')));
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bench/run.ts'), ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => done({ code, output }));
  });
}

/** The part of a markdown document from the heading that starts with `heading` to the next heading. */
export function section(markdown: string, heading: string): string {
  const start = markdown.split('\n').findIndex((line) => line.startsWith(heading));
  if (start === -1) throw new Error(`no heading '${heading}' in:\n${markdown}`);
  const lines = markdown.split('\n').slice(start + 1);
  const end = lines.findIndex((line) => line.startsWith('#'));
  return (end === -1 ? lines : lines.slice(0, end)).join('\n');
}

/** The cells of the table row in `text` whose first cell is `first`, without the outer pipes; undefined when there is none. */
export function row(text: string, first: string): string[] | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`| ${first} |`));
  return line?.split(' | ').map((cell) => cell.replace(/^\| /, '').replace(/ \|$/, '').trim());
}
