// Two instances over one PostgreSQL and one Redis: shared state, revocation everywhere at the next request, one shared rate limit.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadMigrations } from '../../src/store/migrations.ts';
import { call, failureMessage } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
const { after, before, describe, test } = requiring(skip);

/**
 * The first request to each instance after the CLI exited, which must already see the change (docs/api.md: the very next
 * request, on every instance): asserted of what was answered, not of how soon.
 */
async function atNextRequest(what: string, instances: readonly ServerProcess[], answer: (instance: ServerProcess) => Promise<boolean>): Promise<void> {
  const seen = await Promise.all(instances.map(answer));
  seen.forEach((ok, index) => assert.ok(ok, `${what}: instance ${index + 1} did not see it at its first request after the CLI exited`));
}

describe('several instances over PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let instances: ServerProcess[];

  before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      RATE_LIMIT_PER_KEY: '60',
    });
    // Both start at once on an empty database: the migration lock lets exactly one apply the schema.
    instances = await Promise.all([startServer(workspace), startServer(workspace)]);
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database.drop();
    workspace.cleanup();
  });

  test('both instances started on an empty database, and the schema was applied once', async () => {
    const rows = await database.query('SELECT version FROM schema_migrations ORDER BY version');
    const versions = loadMigrations(join(import.meta.dirname, '../../src/store/postgres/migrations')).map((migration) => migration.version);
    assert.deepEqual(rows.rows.map((row) => Number(row.version)), versions);
  });

  test('a write through one instance is read through the other', async () => {
    const alice = await createAccount(workspace, 'alice', { name: 'Alice' });
    const [first, second] = instances as [ServerProcess, ServerProcess];
    assert.equal((await call('POST', `${first.api}/user`, { auth: alice, form: { name: 'Alice One' } })).status, 200);
    assert.equal((await call('POST', `${first.api}/settings`, { auth: alice, form: { timezone: 'Asia/Tokyo' } })).status, 200);
    const read = await call('GET', `${second.api}/user`, { auth: alice });
    assert.deepEqual(read.body.data, { user_id: read.body.data.user_id, username: 'alice', name: 'Alice One', timezone: 'Asia/Tokyo' });
  });

  test('concurrent writes to one account through both instances never produce a record no request wrote', async () => {
    const bob = await createAccount(workspace, 'bob');
    const names = Array.from({ length: 12 }, (_, i) => `Bob ${i} ${'x'.repeat(i * 7)}`);
    const zones = ['Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Africa/Lagos', 'Pacific/Auckland', 'UTC'];
    const writes = [
      ...names.map((name, i) => call('POST', `${instances[i % 2]!.api}/user`, { auth: bob, form: { name } })),
      ...zones.map((timezone, i) => call('POST', `${instances[(i + 1) % 2]!.api}/settings`, { auth: bob, form: { timezone } })),
    ];
    const results = await Promise.all(writes);
    results.forEach((result, i) => {
      assert.equal(result.status, 200, result.text);
      if (i < names.length) assert.equal(result.body.data.name, names[i], 'each POST /user answers with its own name');
      else assert.equal(result.body.data.timezone, zones[i - names.length], 'each POST /settings answers with its own timezone');
    });
    for (const instance of instances) {
      const { data } = (await call('GET', `${instance.api}/user`, { auth: bob })).body;
      assert.ok(names.includes(data.name), `final name ${JSON.stringify(data.name)} was written by no request`);
      assert.ok(zones.includes(data.timezone), `final timezone ${data.timezone} was written by no request`);
    }
  });

  test('a key revoked with the CLI is refused by every instance at its next request', async () => {
    const carol = await createAccount(workspace, 'carol');
    for (const instance of instances) assert.equal((await call('GET', `${instance.api}/user`, { auth: carol })).status, 200);
    const [key] = JSON.parse(await cliOk(workspace, ['keys', 'list', 'carol', '--json']));
    await cliOk(workspace, ['keys', 'revoke', key.key_id]);
    await atNextRequest('revocation', instances, async (instance) => (await call('GET', `${instance.api}/user`, { auth: carol })).status === 401);
    const refused = await call('GET', `${instances[1]!.api}/settings`, { auth: carol });
    assert.equal(failureMessage(refused).code, 'key_revoked');
  });

  test('Premium switched off and an account deleted with the CLI take effect on every instance at its next request', async () => {
    const dave = await createAccount(workspace, 'dave');
    await cliOk(workspace, ['users', 'premium', 'dave', 'off']);
    await atNextRequest('Premium off', instances, async (instance) => (await call('GET', `${instance.api}/user`, { auth: dave })).status === 403);
    await cliOk(workspace, ['users', 'delete', 'dave']);
    await atNextRequest('deletion', instances, async (instance) => (await call('GET', `${instance.api}/hello`, { auth: dave })).status === 401);
  });

  test('the per-key rate limit is one budget across instances', async () => {
    const erin = await createAccount(workspace, 'erin');
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await call('GET', `${instances[i % 2]!.api}/settings`, { auth: erin })).status);
    assert.ok(statuses.every((status) => status === 200), 'the first 60 requests, split over both instances, are within the budget');
    for (const instance of instances) {
      const over = await call('GET', `${instance.api}/settings`, { auth: erin });
      assert.equal(over.status, 429, 'the budget of 60 is spent on both instances together');
      assert.equal(over.headers.get('ratelimit-limit'), '60');
    }
  });
});
