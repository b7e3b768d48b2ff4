// A child process that outlives its test (or its file) is killed and reported, never waited on (test/support/child-processes.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'leaves-a-child.ts');
/** A hang detector for the fixture's run, not a timing check: unregistered, its child would hold it for ever. */
const HANG_MS = 120_000;

interface FixtureRun {
  readonly code: number | null;
  readonly output: string;
  readonly childPid: number;
}

async function runFixture(mode: string): Promise<FixtureRun> {
  const runner = spawn(process.execPath, ['--test', '--test-reporter=tap', FIXTURE], {
    // Without NODE_TEST_CONTEXT, which would make it report to this run instead of printing TAP.
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT')), FIXTURE_MODE: mode, TEST_FILE_END_GRACE_MS: '1000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  runner.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  runner.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      runner.kill('SIGKILL');
      reject(new Error(`the fixture's test run (${mode}) did not end in ${HANG_MS / 1000} s: its child kept it alive\n${output}`));
    }, HANG_MS);
    runner.on('close', (status) => {
      clearTimeout(timer);
      resolve(status);
    });
  });
  const pid = /fixture child pid (\d+)/.exec(output)?.[1];
  assert.ok(pid !== undefined, `the fixture should have started its child:\n${output}`);
  return { code, output, childPid: Number(pid) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a command a test started and forgot is killed when the test ends, and the test fails naming it', async () => {
  const run = await runFixture('forgotten');
  assert.equal(run.code, 1, `the fixture's run should fail:\n${run.output}`);
  assert.match(run.output, /still running when its test ended, killed:/);
  assert.match(run.output, /leaves-a-child fixture/, 'the message should give the command line');
  assert.equal(isAlive(run.childPid), false, 'the child should be dead');
});

test('a command a test waits on for ever is killed once the test times out, and the file ends (issue 36)', async () => {
  const run = await runFixture('stuck');
  assert.equal(run.code, 1, `the fixture's run should fail:\n${run.output}`);
  assert.match(run.output, /still running when its test ended, killed:/);
  assert.match(run.output, /leaves-a-child fixture/, 'the message should give the command line');
  assert.equal(isAlive(run.childPid), false, 'the child should be dead');
});

test('a server a file never stopped is killed when the file ends, and reported; the tests between are untouched', async () => {
  const run = await runFixture('server');
  assert.equal(run.code, 1, `the fixture's run should fail:\n${run.output}`);
  assert.match(run.output, /still running when its test file ended, killed:/);
  assert.match(run.output, /ok 2 - a later test passes/);
  assert.equal(isAlive(run.childPid), false, 'the child should be dead');
});

test("a server the file's own after hook stops is no leftover", async () => {
  const run = await runFixture('stopped');
  assert.equal(run.code, 0, `the fixture's run should pass:\n${run.output}`);
  assert.doesNotMatch(run.output, /still running/);
  assert.equal(isAlive(run.childPid), false, 'the child should be dead');
});
