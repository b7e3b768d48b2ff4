// The client's pure rules: which outcomes are retried, how long to wait, how Retry-After and Basic credentials are read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { basicAuthorization, environmentOfKey } from '../../client/src/credentials.ts';
import { isRetryable, parseRetryAfter, retryDelayMs } from '../../client/src/retry-policy.ts';

const policy = { retries: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

test('429 and 503 are retried for any method; other statuses never; a missing answer only for GET', () => {
  for (const method of ['GET', 'POST']) {
    assert.equal(isRetryable(method, { kind: 'answer', status: 429 }), true);
    assert.equal(isRetryable(method, { kind: 'answer', status: 503 }), true);
    for (const status of [200, 304, 400, 401, 403, 404, 408, 413, 500, 502, 504]) {
      assert.equal(isRetryable(method, { kind: 'answer', status }), false, `${method} ${status} must not be retried`);
    }
  }
  assert.equal(isRetryable('GET', { kind: 'no-answer' }), true);
  assert.equal(isRetryable('POST', { kind: 'no-answer' }), false);
  assert.equal(isRetryable('POST', { kind: 'answer', status: 409 }), false, 'a 409 without an Idempotency-Key is final');
});

test('a POST with an Idempotency-Key is retried without an answer and on 409, as its repeat changes nothing twice', () => {
  assert.equal(isRetryable('POST', { kind: 'no-answer' }, true), true);
  assert.equal(isRetryable('POST', { kind: 'answer', status: 409 }, true), true, '409 idempotency_key_in_use: the first attempt still runs');
  assert.equal(isRetryable('POST', { kind: 'answer', status: 409, code: 'idempotency_key_in_use' }, true), true);
  for (const code of ['username_taken', 'key_inactive', 'too_many_keys']) {
    assert.equal(isRetryable('POST', { kind: 'answer', status: 409, code }, true), false, `a keyed write's 409 ${code} is final`);
  }
  for (const status of [200, 400, 412, 422, 500]) {
    assert.equal(isRetryable('POST', { kind: 'answer', status }, true), false, `a keyed POST's ${status} must not be retried`);
  }
});

test('backoff doubles per retry, with jitter between half and all of the step, and is capped', () => {
  assert.deepEqual([0, 1, 2, 3].map((retry) => retryDelayMs(policy, retry, undefined, () => 0)), [250, 500, 1000, 2000]);
  assert.deepEqual([0, 1, 2, 3].map((retry) => retryDelayMs(policy, retry, undefined, () => 1)), [500, 1000, 2000, 4000]);
  assert.equal(retryDelayMs(policy, 10, undefined, () => 1), 30_000);
});

test('Retry-After is a floor under the backoff and is capped too', () => {
  assert.equal(retryDelayMs(policy, 0, 2, () => 1), 2000);
  assert.equal(retryDelayMs(policy, 4, 2, () => 1), 8000, 'a longer backoff wins over a short Retry-After');
  assert.equal(retryDelayMs(policy, 0, 120, () => 0), 30_000);
});

test('Retry-After reads delta-seconds and HTTP dates', () => {
  assert.equal(parseRetryAfter('7'), 7);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30);
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date in the past means now');
});

test('Basic credentials are base64 of the UTF-8 bytes of username:key', () => {
  assert.equal(basicAuthorization('alice', 'aapi_live_x'), `Basic ${Buffer.from('alice:aapi_live_x').toString('base64')}`);
  assert.equal(basicAuthorization('zoë', 'k€y'), `Basic ${Buffer.from('zoë:k€y', 'utf8').toString('base64')}`);
});

test('the key prefix names the environment', () => {
  assert.equal(environmentOfKey('aapi_live_abc'), 'live');
  assert.equal(environmentOfKey('aapi_sandbox_abc'), 'sandbox');
  assert.equal(environmentOfKey('not-a-key'), undefined);
});
