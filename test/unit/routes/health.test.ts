// /readyz asks the engines at most once per interval, however many callers poll it, and shares the answer.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import Fastify from 'fastify';
import { failureResponses } from '../../../src/http/failures/failure-responses.ts';
import { healthRoutes } from '../../../src/routes/health.ts';
import { HANG_MS } from '../../support/eventually.ts';

function appWith(check: () => Promise<void>, maxAgeMs: number) {
  const app = Fastify();
  app.register(failureResponses, { apiPrefix: '/api/v0' });
  // A check's own time limit is not what these tests are about: generous, so a loaded machine cannot trip it.
  app.register(healthRoutes, { checks: [{ name: 'store', check }], timeoutMs: 60_000, maxAgeMs });
  return app;
}

test('500 concurrent /readyz calls run the store check once, and all get its answer', async () => {
  let checks = 0;
  const app = appWith(async () => {
    checks++;
    await sleep(20);
  }, 60_000);
  const answers = await Promise.all(Array.from({ length: 500 }, () => app.inject('/readyz')));
  assert.deepEqual(new Set(answers.map((answer) => answer.statusCode)), new Set([200]));
  assert.equal(checks, 1, `the store was asked ${checks} times for 500 callers`);
  for (let i = 0; i < 100; i++) await app.inject('/readyz');
  assert.equal(checks, 1, 'callers within the interval asked the store again');
  await app.close();
});

test('a failing engine is shared too, and asked again only after the interval', async () => {
  // "Within the interval" must really be within it: when a loaded machine took longer than the interval over the first
  // answers, that step proved nothing, and the test starts again with a longer one.
  for (let maxAgeMs = 100; ; maxAgeMs *= 4) {
    assert.ok(maxAgeMs <= HANG_MS, 'the first answers never came within the interval: taken for a hang');
    let checks = 0;
    let down = true;
    const app = appWith(async () => {
      checks++;
      if (down) throw new Error('connection refused');
    }, maxAgeMs);
    try {
      const askedAt = performance.now();
      const first = await Promise.all(Array.from({ length: 50 }, () => app.inject('/readyz')));
      assert.ok(first.every((answer) => answer.statusCode === 503 && answer.json().messages[0].code === 'not_ready'), 'a down engine was not answered 503 not_ready');
      assert.equal(checks, 1);
      down = false;
      const within = await app.inject('/readyz');
      // The check's answer came after askedAt, so everything up to askedAt + maxAgeMs was within its interval.
      if (performance.now() - askedAt >= maxAgeMs) continue;
      assert.equal(within.statusCode, 503, 'within the interval the shared answer stands');
      await sleep(maxAgeMs + 50);
      assert.equal((await app.inject('/readyz')).statusCode, 200, 'after the interval the engine is asked again');
      assert.equal(checks, 2);
      return;
    } finally {
      await app.close();
    }
  }
});

test('a slow check is never started twice, even when it outlasts the interval', async () => {
  let running = 0;
  let most = 0;
  let checks = 0;
  const app = appWith(async () => {
    checks++;
    running++;
    most = Math.max(most, running);
    await sleep(150);
    running--;
  }, 20);
  const polls = [];
  const started = performance.now();
  for (let i = 0; i < 12; i++) {
    polls.push(app.inject('/readyz'));
    await sleep(25);
  }
  await Promise.all(polls);
  const elapsed = performance.now() - started;
  assert.equal(most, 1, `${most} checks ran at once`);
  // One after another, each of at least 150 ms: no more than fit in the time the polls took, however long a loaded machine
  // made that (about 300 ms when idle: 3 checks).
  const fit = Math.floor(elapsed / 150) + 1;
  assert.ok(checks <= fit, `${checks} checks for 12 polls over ${elapsed.toFixed(0)} ms of 150 ms checks: more than the ${fit} that fit one after another`);
  await app.close();
});
