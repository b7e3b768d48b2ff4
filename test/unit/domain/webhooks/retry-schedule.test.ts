// The retry schedule: at least three days by default, each wait jittered by at most a fifth, then given up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RETRY_SCHEDULE_MS, nextAttemptAt } from '../../../../src/domain/webhooks/retry-schedule.ts';
import { loadConfig } from '../../../../src/config.ts';

test('the default schedule retries for more than three days', () => {
  const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((sum, ms) => sum + ms, 0);
  assert.ok(total >= 3 * 86_400_000, `only ${total / 3_600_000} hours`);
  assert.ok(DEFAULT_RETRY_SCHEDULE_MS.every((ms, i) => i === 0 || ms >= DEFAULT_RETRY_SCHEDULE_MS[i - 1]!), 'waits never shrink');
});

test('each wait is jittered within a fifth either way, and the schedule ends', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  assert.equal(nextAttemptAt([10_000], 1, now, () => 0)!.getTime() - now.getTime(), 8000);
  assert.equal(nextAttemptAt([10_000], 1, now, () => 1)!.getTime() - now.getTime(), 12_000);
  assert.equal(nextAttemptAt([10_000], 2, now), null, 'after the last wait, no attempt more');
});

test('WEBHOOK_* settings are parsed in config.ts, with a lease longer than an attempt', () => {
  const config = loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s,500ms,2h', WEBHOOK_DISABLE_AFTER: '3d', WEBHOOK_ALLOW_PRIVATE: '1' }, {}, '/tmp');
  assert.deepEqual(config.webhooks.retryScheduleMs, [1000, 500, 7_200_000]);
  assert.equal(config.webhooks.disableAfterMs, 3 * 86_400_000);
  assert.equal(config.webhooks.allowPrivate, true);
  assert.equal(loadConfig({}, {}, '/tmp').webhooks.allowPrivate, false);
  assert.equal(loadConfig({}, {}, '/tmp').webhooks.disableAfterMs, 5 * 86_400_000);
  assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s,soon' }, {}, '/tmp'), /WEBHOOK_RETRY_SCHEDULE/);
  assert.throws(() => loadConfig({ WEBHOOK_LEASE_MS: '5000' }, {}, '/tmp'), /WEBHOOK_LEASE_MS/);
});
