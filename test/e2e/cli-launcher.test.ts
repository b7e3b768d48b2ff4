// The README's command line, ./account-api: the project's Node directly, quiet, with no npm in between (issue 36: `npx
// account-api` printed ten EBADENGINE lines on a fresh npm cache and cost a second or more of CPU per call).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { REPO_ROOT, runCommand } from '../support/server-process.ts';

const VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version;
const SCRIPT = join(REPO_ROOT, 'account-api');

// A PATH holding only what the script itself uses: no npm, npx or node to fall back on.
const bare = mkdtempSync(join(tmpdir(), 'account-api-bare-path-'));
symlinkSync('/usr/bin/dirname', join(bare, 'dirname'));
symlinkSync('/usr/bin/readlink', join(bare, 'readlink'));
after(() => rmSync(bare, { recursive: true, force: true }));

const run = (args: readonly string[], env: NodeJS.ProcessEnv) => runCommand(SCRIPT, args, { cwd: tmpdir(), env });

test('./account-api runs the command on the project’s Node with no npm on PATH, and prints only what the command prints', async () => {
  const result = await run(['--version'], { PATH: bare, HOME: process.env.HOME, npm_config_cache: mkdtempSync(join(tmpdir(), 'npm-cache-')) });
  assert.deepEqual(result, { code: 0, stdout: `${VERSION}\n`, stderr: '' });
});

test('./account-api passes the arguments and the exit status through, from any directory', async () => {
  const result = await run(['users', 'frobnicate'], { PATH: bare, HOME: process.env.HOME });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^account-api: unknown users command 'frobnicate'/);
});

test('./account-api linked from a directory on PATH (ln -s) still finds the project it belongs to', async () => {
  const linked = join(bare, 'account-api');
  symlinkSync(SCRIPT, linked);
  const result = await runCommand(linked, ['--version'], { cwd: tmpdir(), env: { PATH: bare, HOME: process.env.HOME } });
  assert.deepEqual(result, { code: 0, stdout: `${VERSION}\n`, stderr: '' });
});

test('the README runs its CLI commands through ./account-api, never npx', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, body]) => body!);
  const commands = blocks.flatMap((body) => body.split('\n')).filter((line) => /\baccount-api (?!@)[a-z-]+/.test(line) && !line.startsWith('#'));
  assert.ok(commands.length > 10, `the README shows its CLI commands: ${commands.length}`);
  assert.deepEqual(commands.filter((line) => line.includes('npx account-api')), [], 'README commands through npx');
});
