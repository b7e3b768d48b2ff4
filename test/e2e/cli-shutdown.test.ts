// A CLI command that did its work exits even when PostgreSQL and Redis never see its connections out (issue 36: a command
// sat 19 minutes in the Redis client's quit()). Both engines are real, behind proxies that swallow the goodbye.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, databaseUrl, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';
import { cliOk, createWorkspace, runCli, type CliResult, type Workspace } from '../support/server-process.ts';
import { isPostgresTerminate, isRedisQuit, silentProxy, type SilentProxy } from '../support/silent-proxy.ts';

/** A hang detector, not a timing check: unbounded, the command never exits. */
const HANG_MS = 120_000;

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
let database: TestDatabase;
let workspace: Workspace;
let pgProxy: SilentProxy;
let redisProxy: SilentProxy;

before(async () => {
  if (skip !== undefined) return;
  database = await createTestDatabase();
  const direct = new URL(databaseUrl(database.name));
  pgProxy = await silentProxy({ host: direct.hostname, port: Number(direct.port || 5432) }, isPostgresTerminate);
  const redis = new URL(TEST_REDIS_URL);
  redisProxy = await silentProxy({ host: redis.hostname, port: Number(redis.port) }, isRedisQuit);
  workspace = createWorkspace({ REDIS_KEY_PREFIX: uniqueKeyPrefix() });
});

after(async () => {
  await pgProxy?.close();
  await redisProxy?.close();
  await database?.drop();
  workspace?.cleanup();
});

test('users create exits 0 when neither engine answers its goodbye, and the account is there', { skip }, async () => {
  const proxied = new URL(databaseUrl(database.name));
  proxied.host = `127.0.0.1:${pgProxy.port}`;
  const args = ['users', 'create', 'alice', '--premium'];
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    runCli(workspace, args, { DATABASE_URL: proxied.toString(), REDIS_URL: `redis://127.0.0.1:${redisProxy.port}` }),
    new Promise<CliResult>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`account-api ${args.join(' ')} did not exit in ${HANG_MS / 1000} s`)), HANG_MS);
    }),
  ]);
  clearTimeout(timer);
  assert.equal(result.code, 0, `stderr: ${result.stderr}`);
  assert.ok(redisProxy.swallowed() >= 1, 'the command should have sent QUIT to Redis');
  assert.ok(pgProxy.swallowed() >= 1, 'the command should have sent Terminate to PostgreSQL');
  const shown = await cliOk(workspace, ['users', 'show', 'alice', '--json'], { DATABASE_URL: databaseUrl(database.name) });
  assert.equal(JSON.parse(shown).premium, true);
});
