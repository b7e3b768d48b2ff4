// Rate-limit counters in Redis: shared by every instance, and a Redis outage answered 503 then healed without a restart.
import assert from 'node:assert/strict';
import { HANG_MS } from '../support/eventually.ts';
import { call, failureMessage } from '../support/http.ts';
import { privateRedis, redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix, type PrivateRedis } from '../support/redis.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';

const skip = await redisSkipReason();
const { after, before, describe, test } = requiring(skip);

/** Polls until `check` holds; `limitMs` is a hang detector, not a timing check (a loaded machine may take long). */
async function pollUntil(what: string, check: () => Promise<boolean>, limitMs = HANG_MS): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (await check()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not happen within ${limitMs} ms: taken for a hang`);
}

describe('shared rate limits over one Redis', () => {
  let workspace: Workspace;
  let first: ServerProcess;
  let second: ServerProcess;
  let alice: Account;

  before(async () => {
    workspace = createWorkspace({ REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueKeyPrefix(), RATE_LIMIT_PER_KEY: '4' });
    alice = await createAccount(workspace, 'alice');
    [first, second] = await Promise.all([startServer(workspace), startServer(workspace)]);
  });

  after(async () => {
    await Promise.all([first.stop(), second.stop()]);
    workspace.cleanup();
  });

  test('requests to two instances spend one budget', async () => {
    const statuses = [];
    for (const server of [first, second, first, second]) statuses.push((await call('GET', `${server.api}/user`, { auth: alice })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200]);
    const fifth = await call('GET', `${first.api}/user`, { auth: alice });
    assert.equal(fifth.status, 429, 'the fifth request across both instances is over the shared limit of 4');
    assert.equal(failureMessage(fifth).code, 'rate_limited');
    assert.equal((await call('GET', `${second.api}/user`, { auth: alice })).status, 429);
  });

  test('without REDIS_URL each instance counts for itself (as documented)', async () => {
    const local = createWorkspace({ RATE_LIMIT_PER_KEY: '2' });
    const bob = await createAccount(local, 'bob');
    const [a, b] = await Promise.all([startServer(local), startServer(local)]);
    try {
      for (const server of [a, a]) assert.equal((await call('GET', `${server.api}/user`, { auth: bob })).status, 200);
      assert.equal((await call('GET', `${a.api}/user`, { auth: bob })).status, 429);
      assert.equal((await call('GET', `${b.api}/user`, { auth: bob })).status, 200, 'the other instance has its own counter');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      local.cleanup();
    }
  });
});

describe('a Redis outage', () => {
  let redis: PrivateRedis;
  let workspace: Workspace;
  let server: ServerProcess;
  let alice: Account;

  before(async () => {
    redis = await privateRedis();
    workspace = createWorkspace({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: uniqueKeyPrefix() });
    alice = await createAccount(workspace, 'alice');
    server = await startServer(workspace);
  });

  after(async () => {
    await server.stop();
    await redis.cleanup();
    workspace.cleanup();
  });

  test('is answered 503 with Retry-After, and service returns by itself within five seconds of Redis coming back', async () => {
    assert.equal((await call('GET', `${server.api}/user`, { auth: alice })).status, 200);
    await redis.stop();

    const down = await call('GET', `${server.api}/user`, { auth: alice });
    assert.equal(down.status, 503);
    assert.equal(down.body.status, 'error');
    assert.equal(failureMessage(down).code, 'rate_limiter_unavailable');
    assert.ok(Number(down.headers.get('retry-after')) > 0, 'a 503 says when to retry');
    assert.equal((await call('GET', `${server.api}/hello`)).status, 503, 'public routes are limited through Redis too');
    assert.equal((await call('GET', `${server.url}/healthz`)).status, 200, 'the process itself is alive');
    const notReady = await call('GET', `${server.url}/readyz`);
    assert.equal(notReady.status, 503);
    assert.equal(failureMessage(notReady).code, 'not_ready');

    await redis.start();
    const recoveryMs = await pollUntil(
      'recovery after Redis came back',
      async () => (await call('GET', `${server.api}/user`, { auth: alice })).status === 200,
    );
    console.log(`redis recovery: first 200 ${recoveryMs} ms after redis-server answered again`);
    // /readyz shares one check per second among its callers, so it may say not-ready for up to a second more.
    await pollUntil('/readyz ready again', async () => (await call('GET', `${server.url}/readyz`)).status === 200);
    assert.equal(server.child.exitCode, null, 'the server never exited');
  });
});
