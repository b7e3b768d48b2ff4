// A suite whose engine is missing shows every one of its tests as skipped in the summary, and under CI fails instead.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../../support/server-process.ts';

const NOWHERE = { TEST_POSTGRES_URL: 'postgres://root@127.0.0.1:1/test', TEST_REDIS_URL: 'redis://127.0.0.1:1' };

function runSuite(file: string, env: NodeJS.ProcessEnv) {
  // Without NODE_TEST_CONTEXT, or the child would think it runs inside this test and run nothing.
  const { CI: _ci, NODE_TEST_CONTEXT: _context, ...rest } = process.env;
  const result = spawnSync(process.execPath, ['--test', join(REPO_ROOT, file)], { env: { ...rest, ...env }, encoding: 'utf8' });
  const count = (name: string) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(result.stdout)?.[1] ?? NaN);
  return { status: result.status, tests: count('tests'), skipped: count('skipped'), output: result.stdout + result.stderr };
}

test('without PostgreSQL, each test of the PostgreSQL contract counts as skipped, not a whole suite as zero', () => {
  const run = runSuite('test/contract/postgres.test.ts', NOWHERE);
  assert.equal(run.status, 0, run.output);
  assert.ok(run.skipped >= 20, `only ${run.skipped} skipped tests counted:\n${run.output}`);
  assert.equal(run.skipped, run.tests, 'some test ran without PostgreSQL');
});

test('without Redis, each Redis test counts as skipped', () => {
  const run = runSuite('test/e2e/redis.test.ts', NOWHERE);
  assert.equal(run.status, 0, run.output);
  assert.ok(run.skipped >= 3, `only ${run.skipped} skipped:\n${run.output}`);
});

test('under CI a missing engine fails the run instead of skipping', () => {
  const run = runSuite('test/contract/postgres.test.ts', { ...NOWHERE, CI: 'true' });
  assert.notEqual(run.status, 0, 'CI passed without PostgreSQL');
  assert.match(run.output, /In CI these tests must run/);
});
