// Attacks on the versioned credential cache (PostgreSQL + Redis), found by a review: a change acknowledged is refused on the very
// next request on every instance, even after Redis comes back from a snapshot, and whatever case the CLI is given a name in.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { call, type CallResult } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { privateRedis, redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix, type PrivateRedis } from '../support/redis.ts';
import { requiring } from '../support/requiring.ts';
import { HANG_MS } from '../support/eventually.ts';
import { cliOk, createAccount, createWorkspace, runCli, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { adminUrlOf, bearer, expectData, makeAdminToken } from './admin/admin-support.ts';
import { refusedWith, warm } from '../support/cached-credentials.ts';

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
const { after, before, describe, test } = requiring(skip);



/** After a Redis restart: the first answer that is not a 503 (the instance's client reconnects); the bound is a hang detector. */
async function firstAnswerAfterReconnect(url: string, account: Account): Promise<CallResult> {
  const started = Date.now();
  for (;;) {
    const result = await call('GET', url, { auth: account });
    if (result.status !== 503 || Date.now() - started > HANG_MS) return result;
    await sleep(100);
  }
}

describe('a Redis that comes back from a snapshot taken before an announcement', () => {
  let database: TestDatabase;
  let redis: PrivateRedis;
  let workspace: Workspace;
  let a: ServerProcess;
  let b: ServerProcess;
  let adminToken: string;
  let prefix: string;

  before(async () => {
    database = await createTestDatabase();
    redis = await privateRedis();
    prefix = uniqueKeyPrefix();
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      ADMIN_PORT: '0',
      CREDENTIAL_CACHE_MAX_AGE_MS: '600000',
    });
    adminToken = await makeAdminToken(workspace);
    [a, b] = await Promise.all([startServer(workspace), startServer(workspace)]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.cleanup();
    await database?.drop();
    workspace?.cleanup();
  });

  test('a key revoked (and acknowledged) after the last RDB save stays refused by an instance that had it cached', async () => {
    const account = await createAccount(workspace, 'snapshotted');
    const keyId = JSON.parse(await cliOk(workspace, ['keys', 'list', 'snapshotted', '--json']))[0].key_id as string;
    await warm(b, account);
    // An ordinary RDB save (as `save 60 10000` would make under load), then a revocation, acknowledged by the admin API.
    const client = new Redis(redis.url);
    await client.save();
    client.disconnect();
    expectData(await call('DELETE', `${adminUrlOf(a)}/keys/${keyId}`, { auth: bearer(adminToken) }));
    // Redis restarts (a crash, an upgrade) and loads that snapshot: the version from before the announcement is back.
    await redis.stop();
    await redis.start();
    // Control: instance A never vouched for the key, reads the row and refuses it.
    refusedWith(await firstAnswerAfterReconnect(`${a.api}/user`, account), 401, 'key_revoked', 'instance A (row read)');
    refusedWith(await firstAnswerAfterReconnect(`${b.api}/user`, account), 401, 'key_revoked', 'instance B (cached) after a Redis restart from a snapshot');
  });
});

describe('the CLI, on PostgreSQL + Redis', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let a: ServerProcess;
  let b: ServerProcess;

  before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      CREDENTIAL_CACHE_MAX_AGE_MS: '600000',
    });
    [a, b] = await Promise.all([startServer(workspace), startServer(workspace)]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
    workspace?.cleanup();
  });

  test('users delete given a name PostgreSQL lower-cases to the account (İ to i) and JavaScript does not announces the account deleted', async () => {
    const account = await createAccount(workspace, 'alice');
    await warm(b, account);
    await cliOk(workspace, ['users', 'delete', 'al\u0130ce']);
    const gone = await runCli(workspace, ['users', 'show', 'alice']);
    assert.notEqual(gone.code, 0, `alice must be gone from the database: ${gone.stdout}`);
    refusedWith(await call('GET', `${a.api}/user`, { auth: account }), 401, 'invalid_credentials', 'instance A (row read)');
    refusedWith(await call('GET', `${b.api}/user`, { auth: account }), 401, 'invalid_credentials', 'instance B (cached) after the deletion');
  });
});
