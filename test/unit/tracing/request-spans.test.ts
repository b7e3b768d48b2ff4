// Protects how a request's span ends: its status code, and a 5xx (our failure) marked as an error, a 4xx (the caller's) not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { issueKey } from '../../../src/domain/api-keys.ts';
import { loadTimezoneCatalog } from '../../../src/domain/timezones.ts';
import { createMetrics } from '../../../src/http/observability/metrics.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { storeNotConnected } from '../../../src/store/store-errors.ts';
import type { Store } from '../../../src/store/store.ts';
import { startTracing } from '../../../src/tracing/otel-tracing.ts';

test('a 503 from a store that is down is an error span naming the failure; a 401 is not an error', async () => {
  const spans: ReadableSpan[] = [];
  const exporter: SpanExporter = { export: (batch, done) => (spans.push(...batch), done({ code: 0 })), shutdown: async () => {} };
  const tracing = startTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces', serviceName: 'test', sampler: 'always_on', sampleRatio: 1 }, '0', exporter);
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' });
  const engine = openStore(config);
  await engine.migrate();
  // The database is down: every credential lookup fails as ConnectingStore's do.
  const down: Store = Object.assign(Object.create(engine) as Store, { findCredential: () => Promise.reject(storeNotConnected()) });
  const app = buildApp({ config, store: tracing.traceStore(down), timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics(), tracing });
  try {
    const key = issueKey('live').token;
    const failed = await app.inject({ method: 'GET', url: '/api/v0/user', headers: { authorization: `Basic ${Buffer.from(`alice:${key}`).toString('base64')}` } });
    assert.equal(failed.statusCode, 503, failed.body);
    const refused = await app.inject({ method: 'GET', url: '/api/v0/user' });
    assert.equal(refused.statusCode, 401, refused.body);
  } finally {
    await app.close();
    await engine.close();
    await tracing.shutdown();
  }
  const [down503, refused401] = spans.filter((span) => span.name === 'GET /api/v0/user');
  assert.ok(down503 !== undefined && refused401 !== undefined, `expected two request spans, got ${spans.map((span) => span.name).join(', ')}`);
  assert.deepEqual(
    { status: down503.attributes['http.response.status_code'], error: down503.attributes['error.type'], code: down503.status.code },
    { status: 503, error: 'store_unavailable', code: SpanStatusCode.ERROR },
  );
  assert.deepEqual(
    { status: refused401.attributes['http.response.status_code'], code: refused401.status.code },
    { status: 401, code: SpanStatusCode.UNSET },
  );
  const lookup = spans.find((span) => span.name === 'store.findCredential');
  assert.equal(lookup?.parentSpanContext?.spanId, down503.spanContext().spanId, 'the failed lookup is not a child of its request');
});
