// Protects the metrics registry: one per app (tests build many), with every metric the operations guide names.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Counter, Histogram, Registry } from 'prom-client';
import { createMetrics } from '../../../../src/http/observability/metrics.ts';

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

describe('answers counted in plain numbers', () => {
  test("scrape exactly as prom-client's own Counter and Histogram would show the same answers", async () => {
    const metrics = createMetrics();
    const reference = new Registry();
    const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
    const requests = new Counter({ name: 'http_requests_total', help: 'h', labelNames: ['route', 'method', 'status'], registers: [reference] });
    const latency = new Histogram({ name: 'http_request_duration_seconds', help: 'h', labelNames: ['route', 'method'], buckets, registers: [reference] });
    const answers: [string | undefined, string, number, number][] = [
      ['/api/v0/user', 'GET', 200, 0.0004],
      ['/api/v0/user', 'GET', 200, 0.001], // on a bucket's bound: counted in it, as prom-client counts it
      ['/api/v0/user', 'GET', 401, 0.03],
      ['/api/v0/user', 'POST', 200, 12], // past the last bound: only +Inf
      [undefined, 'GET', 404, 0.002],
    ];
    for (const [route, method, status, seconds] of answers) {
      metrics.answersOf(route).observe(method, status, seconds);
      requests.inc({ route: route ?? 'unmatched', method, status });
      latency.observe({ route: route ?? 'unmatched', method }, seconds);
    }
    const lines = async (registry: Registry, name: string) => (await registry.getSingleMetricAsString(name)).split('\n').filter((line) => !line.startsWith('# HELP')).sort();
    for (const name of ['http_requests_total', 'http_request_duration_seconds']) {
      assert.deepEqual(await lines(metrics.registry, name), await lines(reference, name), `${name} differs from prom-client's own`);
    }
    // What the cluster aggregation of workers reads: the same values as prom-client's own Histogram gives.
    const json = async (registry: Registry) => (await registry.getMetricsAsJSON()).find((metric) => metric.name === 'http_request_duration_seconds');
    assert.deepEqual(
      (await json(metrics.registry))?.values.map((value) => ({ ...value, exemplar: undefined })),
      (await json(reference))?.values.map((value) => ({ ...value, exemplar: undefined })),
    );
  });
});
