// Every account-api command starts from Node's compile cache (docs/operations.md#start-up), kept in the installation's own
// node_modules/.cache, never the shared temporary directory; NODE_COMPILE_CACHE moves it and NODE_DISABLE_COMPILE_CACHE=1 turns
// it off. Read from Node's own account of it (NODE_DEBUG_NATIVE=COMPILE_CACHE), not from a timing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAIN, REPO_ROOT } from '../support/server-process.ts';

const INSTALLATION_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'node-compile-cache');

/** `account-api --version` with Node telling what its compile cache did, and the modules of ours it read from the cache. */
function versionWithCacheLog(env: NodeJS.ProcessEnv): { log: string; fromCache: string[] } {
  const { NODE_COMPILE_CACHE: _runnerCache, ...rest } = process.env;
  const run = spawnSync(process.execPath, [MAIN, '--version'], { env: { ...rest, NODE_DEBUG_NATIVE: 'COMPILE_CACHE', ...env }, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^\d+\.\d+\.\d+\n$/);
  const log = run.stderr;
  const fromCache = [...log.matchAll(/retrieving transpile cache for StrippedTypeScript file:\/\/(\S+)\.\.\.success/g)].map((match) => match[1]!);
  return { log, fromCache };
}

test("a command's second start reads our TypeScript from the compile cache in the installation, not from /tmp", () => {
  versionWithCacheLog({});
  const { log, fromCache } = versionWithCacheLog({});
  assert.match(log, new RegExp(`resolved path ${INSTALLATION_CACHE.replaceAll('/', '\\/')} `), `the cache is not the installation's:\n${log.slice(0, 2000)}`);
  assert.ok(!log.includes(join(tmpdir(), 'node-compile-cache')), 'the cache is in the shared temporary directory');
  const ours = fromCache.filter((file) => file.startsWith(join(REPO_ROOT, 'src/')));
  assert.ok(ours.includes(join(REPO_ROOT, 'src/cli/run-cli.ts')), `the command's modules were not read from the cache: ${ours.slice(0, 5).join(', ')}`);
  assert.ok(ours.length > 50, `only ${ours.length} of our modules came from the cache`);
});

test('NODE_COMPILE_CACHE moves the cache, and NODE_DISABLE_COMPILE_CACHE=1 turns it off', () => {
  const elsewhere = mkdtempSync(join(tmpdir(), 'account-api-compile-cache-'));
  try {
    versionWithCacheLog({ NODE_COMPILE_CACHE: elsewhere });
    assert.ok(readdirSync(elsewhere).length > 0, 'nothing was written where NODE_COMPILE_CACHE points');
    assert.ok(versionWithCacheLog({ NODE_COMPILE_CACHE: elsewhere }).fromCache.length > 50);
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
  }
  const off = versionWithCacheLog({ NODE_DISABLE_COMPILE_CACHE: '1' });
  assert.deepEqual(off.fromCache, [], 'with NODE_DISABLE_COMPILE_CACHE=1 modules still came from the cache');
});
