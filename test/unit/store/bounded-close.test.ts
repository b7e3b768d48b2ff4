// Closing a connection is bounded: a close the engine never completes ends in a forced disconnect. PostgreSQL's, whose
// pool.end() resolves before its sockets close, is proven where it matters, by a CLI process that exits: test/e2e/cli-shutdown.test.ts.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { closeWithin } from '../../../src/store/bounded-close.ts';
import { closeRedis, openRedis } from '../../../src/store/redis-client.ts';
import { isRedisQuit, silentProxy } from '../../support/silent-proxy.ts';
import { redisSkipReason, TEST_REDIS_URL } from '../../support/redis.ts';

const SHORT_GRACE_MS = 50;

test('a close that never settles is forced after the grace, and the caller goes on', async () => {
  let forced = 0;
  const clean = await closeWithin(() => new Promise(() => {}), () => forced++, SHORT_GRACE_MS);
  assert.equal(clean, false);
  assert.equal(forced, 1, 'force should be called once');
});

test('a close that fails, or throws, is forced too; one that finishes is not', async () => {
  let forced = 0;
  assert.equal(await closeWithin(() => Promise.reject(new Error('gone')), () => forced++, SHORT_GRACE_MS), false);
  assert.equal(await closeWithin(() => { throw new Error('gone'); }, () => forced++, SHORT_GRACE_MS), false);
  assert.equal(forced, 2);
  assert.equal(await closeWithin(() => Promise.resolve(), () => forced++, 60_000), true);
  assert.equal(forced, 2, 'a clean close is not forced');
});

test("closeRedis disconnects a client whose quit() never resolves (issue 36's cluster client)", async () => {
  const calls: string[] = [];
  const stuck = { quit: () => (calls.push('quit'), new Promise<'OK'>(() => {})), disconnect: () => void calls.push('disconnect') };
  await closeRedis(stuck, SHORT_GRACE_MS);
  assert.deepEqual(calls, ['quit', 'disconnect']);
});

test('a real Redis connection whose QUIT is never answered is cut, and the client ends', async (t) => {
  const skip = await redisSkipReason();
  if (skip !== undefined) return t.skip(skip);
  const real = new URL(TEST_REDIS_URL);
  const proxy = await silentProxy({ host: real.hostname, port: Number(real.port) }, isRedisQuit);
  t.after(() => proxy.close());
  const redis = await openRedis({ target: { cluster: false, url: `redis://127.0.0.1:${proxy.port}` }, keyPrefix: '' }, { warn: () => undefined });
  assert.equal(await redis.ping(), 'PONG', 'the proxy passes commands until the QUIT');
  await closeRedis(redis, SHORT_GRACE_MS);
  assert.equal(proxy.swallowed(), 1, 'the client should have sent QUIT');
  // disconnect() half-closes, then cuts the socket when the peer stays silent (ioredis's disconnectTimeout): then 'end'.
  if (redis.status !== 'end') await once(redis, 'end');
  assert.equal(redis.status, 'end');
});
