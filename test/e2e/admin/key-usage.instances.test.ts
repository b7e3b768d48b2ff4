// Usage per key across two instances over PostgreSQL and Redis: each counts in its own memory and flushes on its own, and the
// figures add up to exactly the requests sent to both, per outcome and day; an instance stopped by SIGTERM flushes first.
import assert from 'node:assert/strict';
import { call } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../../support/redis.ts';
import { requiring } from '../../support/requiring.ts';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, makeAdminToken } from './admin-support.ts';
import { NONE, send, usageAddingUpTo, type Caller } from './key-usage-support.ts';

const { describe, test, before, after } = requiring((await postgresSkipReason()) ?? (await redisSkipReason()));

describe('two instances over PostgreSQL and Redis: usage per key adds up', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let servers: ServerProcess[] = [];
  let token: string;

  const adminCall = (instance: number, method: string, path: string, form?: Record<string, string>) =>
    call(method, `${adminUrlOf(servers[instance]!)}${path}`, { auth: bearer(token), ...(form === undefined ? {} : { form }) });
  const newKey = async (username: string, premium: boolean): Promise<Caller & { keyId: string }> => {
    expectData(await adminCall(0, 'POST', '/accounts', { username, premium: String(premium) }), 201);
    const issued = expectData(await adminCall(0, 'POST', `/accounts/${username}/keys`, {}), 201);
    return { username, key: issued.key, keyId: issued.key_id };
  };

  before(async () => {
    database = await createTestDatabase();
    // The key budget (6 a day) is shared through Redis, so exactly the requests past it are 429 whichever instance answers.
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      ADMIN_PORT: '0',
      RATE_LIMIT_PER_KEY: '6',
      RATE_LIMIT_WINDOW_MS: '86400000',
      // The admin token's budget would count every poll of the usage in that day-long window (600 is 30 s of polls): off.
      ADMIN_RATE_LIMIT_PER_TOKEN: '0',
    });
    token = await makeAdminToken(workspace);
    // Instance 1 flushes every 50 ms; instance 2 only at shutdown (an hour's interval), so its SIGTERM flush is what counts.
    servers = await Promise.all([startServer(workspace, [], { KEY_USAGE_FLUSH_MS: '50' }), startServer(workspace, [], { KEY_USAGE_FLUSH_MS: '3600000' })]);
  });

  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    workspace?.cleanup();
    await database?.drop();
  });

  test('requests sent to both instances are counted once each, per outcome, read through either', async () => {
    const [one, two] = servers.map((server) => server.api) as [string, string];
    const alice = await newKey('alice', true);
    const bob = await newKey('bob', false);
    await send(one, alice, 'bad-timezone', 1, 400);
    await send(two, alice, 'bad-timezone', 1, 400);
    await send(one, alice, 'user', 2, 200);
    await send(two, alice, 'user', 2, 200);
    // 6 spent across both: every later request is 429, on either instance.
    await send(two, alice, 'user', 2, 429);
    await send(one, alice, 'user', 1, 429);
    await send(one, bob, 'user', 1, 403);
    await send(two, bob, 'user', 2, 403);
    await send(two, bob, 'hello', 1, 200);
    // Instance 1's own share is written within its interval; instance 2's waits for its shutdown.
    const read = (username: string, keyId: string) => async () => expectData(await adminCall(0, 'GET', `/accounts/${username}/keys/${keyId}/usage`));
    await usageAddingUpTo("alice's usage from instance 1 alone", read('alice', alice.keyId), { ...NONE, client_error: 1, success: 2, rate_limited: 1 });
    assert.equal(await servers[1]!.stop(), 0, 'instance 2 did not shut down cleanly');
    const alices = await usageAddingUpTo("alice's usage from both", read('alice', alice.keyId), { ...NONE, client_error: 2, success: 4, rate_limited: 3 });
    await usageAddingUpTo("bob's usage from both", read('bob', bob.keyId), { ...NONE, refused: 3, success: 1 });
    assert.deepEqual(alices.addresses.map((seen: { address: string }) => seen.address), ['127.0.0.1'], 'one address, seen by both instances, listed once');
  });
});
