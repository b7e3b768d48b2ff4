// Protects traced requests without credentials: the pipeline lets them go on at the end of the turn (turn-batch.ts), all
// from one setImmediate, and each must still go on inside its own request's span. (Found by a review: the second request
// of a turn ran its handler, and its store calls, in the first request's span.)
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { loadTimezoneCatalog } from '../../../src/domain/timezones.ts';
import { createMetrics } from '../../../src/http/observability/metrics.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { startTracing } from '../../../src/tracing/otel-tracing.ts';

test('two anonymous requests read in one turn each run their handler, and its store calls, inside their own span', async () => {
  const spans: ReadableSpan[] = [];
  const exporter: SpanExporter = { export: (batch, done) => (spans.push(...batch), done({ code: 0 })), shutdown: async () => {} };
  const tracing = startTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces', serviceName: 'test', sampler: 'always_on', sampleRatio: 1 }, '0', exporter);
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' });
  const engine = openStore(config);
  await engine.migrate();
  const store = tracing.traceStore(engine);
  const app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics(), tracing });
  // A public route whose handler asks the traced store something, as any anonymous handler that reads would.
  app.register(async (scope: FastifyInstance) => {
    scope.get('/probe/:n', { config: { access: 'public' } }, async () => {
      await store.findCredential('nosuchkeyid0');
      return { ok: true };
    });
  });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const answered = new Promise<void>((resolve, reject) => {
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
        if ((received.match(/"ok":true/g) ?? []).length === 2) resolve();
      });
      socket.on('error', reject);
    });
    const request = (n: string) => `GET /probe/${n} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    // One write: both are read in one turn, and go on together at its end.
    socket.write(request('a') + request('b'));
    await answered;
    socket.destroy();
  } finally {
    await app.close();
    await engine.close();
    await tracing.shutdown();
  }
  const requestSpan = (n: string) => spans.find((span) => span.name === 'GET /probe/:n' && span.attributes['url.path'] === `/probe/${n}`);
  const [a, b] = [requestSpan('a'), requestSpan('b')];
  assert.ok(a !== undefined && b !== undefined, `request spans: ${spans.map((span) => span.name).join(', ')}`);
  const parents = spans.filter((span) => span.name === 'store.findCredential').map((span) => span.parentSpanContext?.spanId);
  assert.deepEqual(
    [...parents].sort(),
    [a.spanContext().spanId, b.spanContext().spanId].sort(),
    `the store spans' parents are ${parents.join(', ')}; request a's span is ${a.spanContext().spanId}, b's ${b.spanContext().spanId}`,
  );
});
