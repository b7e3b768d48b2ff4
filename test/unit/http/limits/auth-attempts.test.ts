// countAuthAttempt: an attempt counted against the address's failed-attempt budget whose verdict past it is the caller's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { HttpError } from '../../../../src/http/failures/http-error.ts';
import { rateLimits } from '../../../../src/http/limits/rate-limits.ts';

const BUDGET = 3;

/** An app whose GET /attempt counts one attempt and answers what it was told: within the budget, or over it (and its 429). */
async function appCountingAttempts() {
  const app = Fastify();
  await app.register(rateLimits, {
    settings: { windowMs: 3_600_000, perKey: 100, perAddress: 100, authFailuresPerAddress: BUDGET, maxWindows: 100 },
    redis: null,
    keyPrefix: '',
  });
  app.get('/attempt', async (request, reply) => {
    const counted = await app.rateBudgets.countAuthAttempt(request);
    if (request.headers['x-right'] === 'yes') app.rateBudgets.refundAuthAttempt(request, counted.attempt);
    if (counted.over === null) return { over: false };
    const refusal = app.rateBudgets.refuseAuthAttempt(reply, counted.over);
    assert.ok(refusal instanceof HttpError);
    return { over: true, status: refusal.statusCode, code: refusal.code, retryAfter: refusal.headers['Retry-After'] };
  });
  return app;
}

test('past the budget an attempt is still counted and handed back to the caller, with the 429 to refuse it with', async () => {
  const app = await appCountingAttempts();
  const attempt = async (headers: Record<string, string> = {}) => (await app.inject({ method: 'GET', url: '/attempt', headers })).json();
  for (let i = 0; i < BUDGET; i++) assert.deepEqual(await attempt(), { over: false }, `attempt ${i + 1} of ${BUDGET} was over the budget`);
  const over = await attempt();
  assert.equal(over.over, true);
  assert.equal(over.status, 429);
  assert.equal(over.code, 'too_many_failed_attempts');
  assert.ok(Number(over.retryAfter) >= 1, `Retry-After: ${over.retryAfter}`);
  await app.close();
});

test('an attempt given back past the budget leaves the count where the failures put it', async () => {
  const app = await appCountingAttempts();
  const attempt = async (headers: Record<string, string> = {}) => (await app.inject({ method: 'GET', url: '/attempt', headers })).json();
  for (let i = 0; i < BUDGET - 1; i++) await attempt();
  // Right attempts, each given back: the last failure the budget allows is still left.
  for (let i = 0; i < 5; i++) await attempt({ 'x-right': 'yes' });
  assert.deepEqual(await attempt(), { over: false });
  assert.equal((await attempt()).over, true);
  await app.close();
});
