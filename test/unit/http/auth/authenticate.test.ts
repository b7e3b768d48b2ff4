// Authentication's budget as the store sees it: which requests make it read a credential, on SQLite and on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../../src/app.ts';
import { loadConfig } from '../../../../src/config.ts';
import { composeKey, issueKey } from '../../../../src/domain/api-keys.ts';
import { DomainError } from '../../../../src/domain/errors.ts';
import { loadTimezoneCatalog } from '../../../../src/domain/timezones.ts';
import { createMetrics } from '../../../../src/http/observability/metrics.ts';
import { openStore } from '../../../../src/store/open-store.ts';
import type { Store } from '../../../../src/store/store.ts';
import { basic } from '../../../support/http.ts';
import { requiring } from '../../../support/requiring.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../../support/postgres.ts';

const BUDGET = 20;
const PER_KEY = 30;

const engines = [
  { name: 'SQLite', skip: undefined as string | undefined, url: async () => ({ url: 'sqlite::memory:', drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: await postgresSkipReason(),
    url: async () => {
      const database: TestDatabase = await createTestDatabase();
      return { url: database.url, drop: () => database.drop() };
    },
  },
];

for (const engine of engines) {
  const { after, before, describe, test } = requiring(engine.skip);
  describe(`the failed-attempt budget and store reads: ${engine.name}`, () => {
    let store: Store;
    let app: FastifyInstance;
    let drop: () => Promise<void>;
    let reads = 0;
    let storeDown = false;
    const holderKey = issueKey('live');
    const otherKey = issueKey('live');
    const freeKey = issueKey('live');
    const patientKey = issueKey('live');

    before(async () => {
      const target = await engine.url();
      drop = target.drop;
      const config = loadConfig({
        DATABASE_URL: target.url,
        LOG_LEVEL: 'silent',
        MAX_EVENT_LOOP_DELAY_MS: '0',
        RATE_LIMIT_AUTH_FAILURES: String(BUDGET),
        RATE_LIMIT_PER_KEY: String(PER_KEY),
      });
      const real = openStore(config);
      await real.migrate();
      for (const [username, key] of [['holder', holderKey], ['other', otherKey], ['free', freeKey], ['patient', patientKey]] as const) {
        await real.createAccount({ username, name: username, timezone: 'UTC', premium: username !== 'free' });
        await real.createKey(username, { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null });
      }
      // Every credential read the app asks of the store, whatever the engine answers from.
      store = new Proxy(real, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'findCredential') return typeof value === 'function' ? value.bind(target) : value;
          return (keyId: string) => {
            reads++;
            if (storeDown) return Promise.reject(new DomainError('unavailable', 'store_unavailable', 'The database does not answer.'));
            return target.findCredential(keyId);
          };
        },
      });
      app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() });
      await app.ready();
    });

    after(async () => {
      await app?.close();
      await store?.close();
      await drop?.();
    });

    const get = (authorization: string, from = '127.0.0.1') =>
      app.inject({ method: 'GET', url: '/api/v0/user', headers: { authorization }, remoteAddress: from });
    const guess = () => basic('holder', composeKey('live', holderKey.keyId, randomBytes(16).toString('hex')).token);

    test('a key in use keeps working after 100 failed attempts from its address', async () => {
      assert.equal((await get(basic('holder', holderKey.token))).statusCode, 200);
      const statuses = [];
      for (let i = 0; i < 100; i++) statuses.push((await get(guess())).statusCode);
      assert.equal(statuses.filter((status) => status === 401).length, BUDGET);
      assert.equal(statuses.filter((status) => status === 429).length, 100 - BUDGET);
      for (let i = 0; i < 5; i++) {
        const answer = await get(basic('holder', holderKey.token));
        assert.equal(answer.statusCode, 200, `the account holder's key was refused after the guesses: ${answer.body}`);
      }
    });

    test('attempts past the budget are answered 429 without a store read', async () => {
      // The budget is spent by the test before; a key this process never saw right cannot be vouched for.
      const before = reads;
      const answers = await Promise.all(Array.from({ length: 50 }, () => get(guess())));
      assert.ok(answers.every((answer) => answer.statusCode === 429));
      const unseen = await get(basic('other', otherKey.token));
      assert.equal(unseen.statusCode, 429, 'a key never seen right is not checked past the budget');
      assert.equal(reads - before, 0, `${reads - before} credential reads were made past the budget`);
    });

    test('a valid key, even of an account without Premium, drives no store read past its own budget', async () => {
      const auth = basic('free', freeKey.token);
      const statuses: number[] = [];
      const before = reads;
      for (let i = 0; i < PER_KEY + 20; i++) statuses.push((await get(auth, '192.0.2.50')).statusCode);
      assert.deepEqual(statuses, [...Array<number>(PER_KEY).fill(403), ...Array<number>(20).fill(429)]);
      assert.equal(reads - before, PER_KEY, `${reads - before} credential reads for a key with a budget of ${PER_KEY}`);
    });

    test('attempts answered 503 because the store is down are given back: the key works once it returns', async () => {
      const auth = basic('patient', patientKey.token);
      storeDown = true;
      try {
        for (let i = 0; i < BUDGET + 10; i++) {
          const answer = await get(auth, '192.0.2.60');
          assert.equal(answer.statusCode, 503, `attempt ${i}: ${answer.body}`);
        }
      } finally {
        storeDown = false;
      }
      const back = await get(auth, '192.0.2.60');
      assert.equal(back.statusCode, 200, `after the outage the key got ${back.statusCode}: ${back.body}`);
    });

    test('a remembered key that is revoked is refused at once, and then spends the budget like a guess', async () => {
      await store.revokeKey(holderKey.keyId);
      const revoked = await get(basic('holder', holderKey.token));
      assert.equal(revoked.statusCode, 401, 'a revoked key was let in on the strength of being remembered');
      assert.equal(JSON.parse(revoked.body).messages[0].code, 'key_revoked');
      const before = reads;
      assert.equal((await get(basic('holder', holderKey.token))).statusCode, 429, 'a forgotten key was not sent to the budget');
      assert.equal(reads - before, 0);
    });
  });
}
