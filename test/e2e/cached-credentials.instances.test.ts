// Two instances over one PostgreSQL and one Redis or a Redis Cluster, each caching credentials (issue 28): every kind of credential change,
// made through the other instance, its admin API or the CLI, is seen by a warmed instance at its very next request; a change
// never announced is seen within the max age; and one key's last use is written once per interval across both.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';
import { REDIS_KINDS } from '../support/redis-cluster.ts';
import { requiring } from '../support/requiring.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { adminUrlOf, bearer, expectData, makeAdminToken } from './admin/admin-support.ts';
import { refusedWith, warm } from '../support/cached-credentials.ts';

for (const redis of REDIS_KINDS) {
  const { after, before, describe, test } = requiring((await postgresSkipReason()) ?? (await redis.skipReason()));

  describe(`credential changes reach a warmed cache at its very next request, over ${redis.name}`, () => {
    let database: TestDatabase;
    let workspace: Workspace;
    let a: ServerProcess;
    let b: ServerProcess;
    let adminToken: string;
    let redisCleanup: (() => Promise<void>) | undefined;

    before(async () => {
      database = await createTestDatabase();
      const started = await redis.start();
      redisCleanup = started.cleanup;
      workspace = createWorkspace({
        DATABASE_URL: database.url,
        ...started.env,
        REDIS_KEY_PREFIX: uniqueKeyPrefix(),
        ADMIN_PORT: '0',
        // Far longer than the test: only the announcement can make B read a credential again.
        CREDENTIAL_CACHE_MAX_AGE_MS: '600000',
      });
      adminToken = await makeAdminToken(workspace);
      [a, b] = await Promise.all([startServer(workspace), startServer(workspace)]);
    });

    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await database?.drop();
      await redisCleanup?.();
      workspace?.cleanup();
    });

    const admin = (method: string, path: string, form?: Record<string, string>) =>
      call(method, `${adminUrlOf(a)}${path}`, { auth: bearer(adminToken), ...(form === undefined ? {} : { form }) });
    const keyIdOf = async (username: string) => JSON.parse(await cliOk(workspace, ['keys', 'list', username, '--json']))[0].key_id as string;

    test('a key revoked through instance A\'s admin API', async () => {
      const account = await createAccount(workspace, 'revoked');
      await warm(b, account);
      expectData(await admin('DELETE', `/keys/${await keyIdOf('revoked')}`));
      refusedWith(await call('GET', `${b.api}/user`, { auth: account }), 401, 'key_revoked', 'revocation');
    });

    test('a key rolled by the CLI with no overlap', async () => {
      const account = await createAccount(workspace, 'rolled');
      await warm(b, account);
      await cliOk(workspace, ['keys', 'roll', await keyIdOf('rolled'), '--overlap', '0']);
      refusedWith(await call('GET', `${b.api}/user`, { auth: account }), 401, 'key_expired', 'roll');
    });

    test('an account deleted by the CLI', async () => {
      const account = await createAccount(workspace, 'deleted');
      await warm(b, account);
      await cliOk(workspace, ['users', 'delete', 'deleted']);
      refusedWith(await call('GET', `${b.api}/user`, { auth: account }), 401, 'invalid_credentials', 'deletion');
    });

    test('Premium removed through instance A\'s admin API', async () => {
      const account = await createAccount(workspace, 'lapsed');
      await warm(b, account);
      expectData(await admin('PATCH', '/accounts/lapsed', { premium: 'false' }));
      refusedWith(await call('GET', `${b.api}/user`, { auth: account }), 403, 'premium_required', 'Premium off');
    });

    test('a name changed through instance A: GET /user on B answers the new one', async () => {
      const account = await createAccount(workspace, 'renamed', { name: 'Before' });
      await warm(b, account);
      assert.equal((await call('POST', `${a.api}/user`, { auth: account, form: { name: 'After' } })).status, 200);
      assert.equal((await call('GET', `${b.api}/user`, { auth: account })).body.data.name, 'After');
    });

    test('a timezone changed through instance A: B answers the new one', async () => {
      const account = await createAccount(workspace, 'moved', { timezone: 'UTC' });
      await warm(b, account);
      assert.equal((await call('POST', `${a.api}/settings`, { auth: account, form: { timezone: 'Asia/Tokyo' } })).status, 200);
      assert.equal((await call('GET', `${b.api}/user`, { auth: account })).body.data.timezone, 'Asia/Tokyo');
      assert.equal((await call('GET', `${b.api}/settings`, { auth: account })).body.data.timezone, 'Asia/Tokyo');
    });

    test('one key\'s use on both instances, many times within the interval, is written once', async () => {
      const account = await createAccount(workspace, 'busy');
      const keyId = await keyIdOf('busy');
      // Counted by a trigger, behind the store's back: every UPDATE of the key's row, whatever it changed.
      await database.query('CREATE TABLE IF NOT EXISTS key_row_updates (key_id text NOT NULL)');
      await database.query(
        `CREATE OR REPLACE FUNCTION count_key_row_update() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN INSERT INTO key_row_updates VALUES (NEW.key_id); RETURN NEW; END $$`,
      );
      await database.query('DROP TRIGGER IF EXISTS key_row_updated ON api_keys');
      await database.query('CREATE TRIGGER key_row_updated AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION count_key_row_update()');
      for (let i = 0; i < 40; i++) assert.equal((await call('GET', `${(i % 2 === 0 ? a : b).api}/user`, { auth: account })).status, 200);
      const updates = async () => Number((await database.query('SELECT count(*) AS n FROM key_row_updates WHERE key_id = $1', [keyId])).rows[0].n);
      // The stamp is written off the request path: wait for the first, then long enough for any second to land.
      for (let waited = 0; (await updates()) === 0 && waited < 10_000; waited += 100) await sleep(100);
      await sleep(1500);
      assert.equal(await updates(), 1, 'last use must be written once per KEY_TOUCH_INTERVAL_MS across the deployment, not once per instance');
      const [row] = (await database.query('SELECT last_used_at FROM api_keys WHERE key_id = $1', [keyId])).rows;
      assert.ok(row.last_used_at !== null, 'the one write recorded the use');
    });
  });
}

const { after, before, describe, test } = requiring((await postgresSkipReason()) ?? (await redisSkipReason()));

describe('a change committed but never announced (a crash between the two)', () => {
  const MAX_AGE_MS = 2000;
  let database: TestDatabase;
  let workspace: Workspace;
  let b: ServerProcess;

  before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      CREDENTIAL_CACHE_MAX_AGE_MS: String(MAX_AGE_MS),
    });
    b = await startServer(workspace);
  });

  after(async () => {
    await b?.stop();
    await database?.drop();
    workspace?.cleanup();
  });

  test('is seen once the max age has passed', async () => {
    const account = await createAccount(workspace, 'crashed');
    await warm(b, account);
    // Behind the service's back: no announcement, as when a process dies between its commit and Redis.
    await database.query(`UPDATE api_keys SET revoked_at = now() WHERE account_id = (SELECT id FROM accounts WHERE username = 'crashed')`);
    await sleep(MAX_AGE_MS + 200);
    refusedWith(await call('GET', `${b.api}/user`, { auth: account }), 401, 'key_revoked', 'an unannounced revocation after the max age');
  });
});
