// Protects `traced`, the helper other work (webhook deliveries) runs in: a span around the work, its store calls as children.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '../../../src/config.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { startTracing } from '../../../src/tracing/otel-tracing.ts';
import { untraced } from '../../../src/tracing/tracing.ts';

/** An exporter that keeps what it is given, also past shutdown (the SDK's in-memory one forgets it then). */
function keepingExporter(): SpanExporter & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    export: (batch, done) => {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
}

const SETTINGS = { tracesUrl: 'http://127.0.0.1:9/v1/traces', serviceName: 'test', sampler: 'always_on', sampleRatio: 1 } as const;

test("traced work is one span, with the store calls made inside it as its children; a failure marks it and passes on", async () => {
  const exporter = keepingExporter();
  const tracing = startTracing(SETTINGS, '0', exporter);
  const store = tracing.traceStore(openStore(loadConfig({ DATABASE_URL: 'sqlite::memory:' })));
  await store.migrate();
  const count = await tracing.traced('webhook.deliver', { 'webhook.event': 'account.created' }, async (span) => {
    span.setAttribute('http.response.status_code', 204);
    return store.countAccounts();
  });
  assert.equal(count, 0, 'the work answered something else through traced');
  const failure = new Error('receiver unreachable');
  await assert.rejects(tracing.traced('webhook.deliver', {}, async () => Promise.reject(failure)), (error) => error === failure);
  await store.close();
  await tracing.shutdown();

  const [delivered, refused] = exporter.spans.filter((span) => span.name === 'webhook.deliver');
  assert.ok(delivered !== undefined && refused !== undefined, `expected two delivery spans, got ${exporter.spans.map((span) => span.name).join(', ')}`);
  assert.deepEqual(delivered.attributes, { 'webhook.event': 'account.created', 'http.response.status_code': 204 });
  const counted = exporter.spans.find((span) => span.name === 'store.countAccounts');
  assert.equal(counted?.parentSpanContext?.spanId, delivered.spanContext().spanId, 'the store call is not a child of the delivery span');
  assert.equal(refused.status.code, 2, 'a failed delivery is not marked as an error');
});

test('untraced runs the work and answers what it answers', async () => {
  let noted = false;
  const answer = await untraced('webhook.deliver', {}, async (span) => {
    span.setAttribute('anything', 1);
    noted = true;
    return 42;
  });
  assert.deepEqual({ answer, noted }, { answer: 42, noted: true });
});
