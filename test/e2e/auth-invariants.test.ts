// Protects the authentication rules the rewrite must keep, on local counters and on Redis, with a store that throws
// synchronously and one that rejects: a failed attempt is spent before the store is asked, given back exactly once when the
// store cannot answer, and a remembered key that is revoked is refused on the very next (concurrent) requests.
//   (Redis at redis://127.0.0.1:6379 for the Redis half)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { composeKey, issueKey } from '../../src/domain/api-keys.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { loadTimezoneCatalog } from '../../src/domain/timezones.ts';
import { createMetrics } from '../../src/http/observability/metrics.ts';
import { openStore } from '../../src/store/open-store.ts';
import { basic } from '../support/http.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';

const redisSkip = await redisSkipReason();
const BUDGET = 5;

for (const counters of ['local', 'redis'] as const) {
  for (const failure of ['throws synchronously', 'rejects'] as const) {
    test(`${counters} counters, a store that ${failure}`, { skip: counters === 'redis' ? redisSkip : undefined }, async () => {
      const config = loadConfig({
        DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '0',
        RATE_LIMIT_AUTH_FAILURES: String(BUDGET),
        RATE_LIMIT_PER_KEY: '1000',
        ...(counters === 'redis' ? { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueKeyPrefix() } : {}),
      });
      const real = openStore(config);
      await real.migrate();
      const key = issueKey('live');
      await real.createAccount({ username: 'holder', name: 'h', timezone: 'UTC', premium: true });
      await real.createKey('holder', { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null });
      let down = false;
      let reads = 0;
      const store = new Proxy(real, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'findCredential') return typeof value === 'function' ? value.bind(target) : value;
          return (keyId: string) => {
            reads++;
            if (!down) return target.findCredential(keyId);
            const error = new DomainError('unavailable', 'store_unavailable', 'down');
            if (failure === 'throws synchronously') throw error;
            return Promise.reject(error);
          };
        },
      });
      const redis = counters === 'redis' ? new Redis(TEST_REDIS_URL) : null;
      const app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis, metrics: createMetrics() });
      await app.ready();
      try {
        const get = (authorization: string, from = '192.0.2.9') =>
          app.inject({ method: 'GET', url: '/api/v0/user', headers: { authorization }, remoteAddress: from });
        const guess = () => basic('holder', composeKey('live', key.keyId, randomBytes(16).toString('hex')).token);
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await get(guess())).statusCode);
        down = true;
        for (let i = 0; i < 3; i++) statuses.push((await get(basic('holder', key.token))).statusCode);
        down = false;
        for (let i = 0; i < 4; i++) statuses.push((await get(guess())).statusCode);
        // 3 failures, 3 outages given back exactly once each, then 2 more failures fill the budget of 5.
        assert.deepEqual(statuses, [401, 401, 401, 503, 503, 503, 401, 401, 429, 429]);
        const before = reads;
        assert.equal((await get(guess())).statusCode, 429);
        assert.equal(reads, before, 'a guess past the budget reached the store');

        assert.equal((await get(basic('holder', key.token), '192.0.2.10')).statusCode, 200);
        await real.revokeKey(key.keyId);
        const both = await Promise.all([get(basic('holder', key.token), '192.0.2.10'), get(basic('holder', key.token), '192.0.2.10')]);
        assert.deepEqual(both.map((answer) => JSON.parse(answer.body).messages[0].code), ['key_revoked', 'key_revoked']);
      } finally {
        await app.close();
        await real.close();
        redis?.disconnect();
      }
    });
  }
}
