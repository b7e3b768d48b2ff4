// Protects the metrics registry: one per app (tests build many), with every metric the operations guide names.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { createMetrics } from '../../../src/http/metrics.ts';

describe('createMetrics', () => {
  test('can be called many times in one process: each app has its own registry', async () => {
    const first = createMetrics();
    const second = createMetrics();
    first.authFailed('invalid_credentials');
    assert.match(await first.registry.getSingleMetricAsString('auth_failures_total'), /auth_failures_total\{reason="invalid_credentials"\} 1/);
    assert.doesNotMatch(await second.registry.getSingleMetricAsString('auth_failures_total'), /invalid_credentials/, 'a count leaked into another app');
  });

  test('registers the documented metrics and the process metrics', async () => {
    const metrics = createMetrics();
    metrics.rateLimited('per_key');
    const text = await metrics.registry.metrics();
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'auth_failures_total',
      'rate_limit_rejections_total',
      'store_errors_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is missing`);
    }
    assert.match(text, /rate_limit_rejections_total\{budget="per_key"\} 1/);
  });

  test("the admin port's view labels its samples port=\"admin\"; the public port's carry no port label", async () => {
    const metrics = createMetrics();
    metrics.authFailed('invalid_credentials');
    metrics.forPort('admin').authFailed('invalid_admin_token');
    const text = await metrics.registry.getSingleMetricAsString('auth_failures_total');
    assert.match(text, /^auth_failures_total\{reason="invalid_credentials"\} 1$/m);
    assert.match(text, /^auth_failures_total\{reason="invalid_admin_token",port="admin"\} 1$/m);
  });
});
