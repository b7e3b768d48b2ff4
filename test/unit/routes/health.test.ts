// /readyz asks the engines at most once per interval, however many callers poll it, and shares the answer.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import Fastify from 'fastify';
import { failureResponses } from '../../../src/http/failures/failure-responses.ts';
import { healthRoutes } from '../../../src/routes/health.ts';

function appWith(check: () => Promise<void>, maxAgeMs: number) {
  const app = Fastify();
  app.register(failureResponses, { apiPrefix: '/api/v0' });
  app.register(healthRoutes, { checks: [{ name: 'store', check }], timeoutMs: 1000, maxAgeMs });
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
  let checks = 0;
  let down = true;
  const app = appWith(async () => {
    checks++;
    if (down) throw new Error('connection refused');
  }, 100);
  const first = await Promise.all(Array.from({ length: 50 }, () => app.inject('/readyz')));
  assert.ok(first.every((answer) => answer.statusCode === 503 && answer.json().messages[0].code === 'not_ready'), 'a down engine was not answered 503 not_ready');
  assert.equal(checks, 1);
  down = false;
  assert.equal((await app.inject('/readyz')).statusCode, 503, 'within the interval the shared answer stands');
  await sleep(150);
  assert.equal((await app.inject('/readyz')).statusCode, 200, 'after the interval the engine is asked again');
  assert.equal(checks, 2);
  await app.close();
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
  for (let i = 0; i < 12; i++) {
    polls.push(app.inject('/readyz'));
    await sleep(25);
  }
  await Promise.all(polls);
  assert.equal(most, 1, `${most} checks ran at once`);
  assert.ok(checks <= 3, `${checks} checks for 12 polls over ~300 ms of 150 ms checks`);
  await app.close();
});
