// Protects issue 13 from issue 15: without OTEL_EXPORTER_OTLP_ENDPOINT, tracing adds nothing to a request's path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { buildApp } from '../../../src/app.ts';
import { loadConfig, type Config } from '../../../src/config.ts';
import { loadTimezoneCatalog } from '../../../src/domain/timezones.ts';
import { createMetrics } from '../../../src/http/observability/metrics.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { startTracing } from '../../../src/tracing/otel-tracing.ts';
import { createTracing } from '../../../src/tracing/start-tracing.ts';
import type { Tracing } from '../../../src/tracing/tracing.ts';

/** The hooks Fastify lists for GET /api/v0/user: kind -> function names, in the order they run. */
async function hooksOfUserRoute(config: Config, tracing: Tracing | null): Promise<Record<string, string[]>> {
  const store = openStore(config);
  const app: FastifyInstance = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics(), tracing });
  try {
    await app.ready();
    const lines = app.printRoutes({ includeHooks: true, commonPrefix: false, method: 'GET' }).split('\n');
    const at = lines.findIndex((line) => line.includes('/api/v0/user (GET)'));
    assert.ok(at >= 0, `GET /api/v0/user is not in the route listing:\n${lines.join('\n')}`);
    const hooks: Record<string, string[]> = {};
    for (const line of lines.slice(at + 1)) {
      const match = /• \((\w+)\) (\[.*\])$/.exec(line);
      if (match === null) break;
      hooks[match[1]!] = JSON.parse(match[2]!) as string[];
    }
    return hooks;
  } finally {
    await app.close();
    await store.close();
  }
}

test('without OTEL_EXPORTER_OTLP_ENDPOINT there is no tracing object at all', async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' });
  assert.equal(config.tracing, null);
  assert.equal(await createTracing(config.tracing, config.version), null);
});

test("an untraced app registers the pipeline's hooks only; a traced one adds its own", async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' });
  const untraced = await hooksOfUserRoute(config, null);
  const tracing = startTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces', serviceName: 'test', sampler: 'always_on', sampleRatio: 1 }, '0', new InMemorySpanExporter());
  const traced = await hooksOfUserRoute(config, tracing);
  await tracing.shutdown();
  assert.deepEqual(
    untraced,
    { onRequest: ['anonymous()'], onSend: ['anonymous()'], onResponse: ['anonymous()'] },
    "untraced, GET /api/v0/user should run the pipeline's three hooks and nothing else",
  );
  assert.deepEqual(
    traced,
    { onRequest: ['startRequestSpan()', 'anonymous()'], onSend: ['anonymous()'], onResponse: ['endRequestSpan()', 'anonymous()'] },
    "traced, the span's hooks should run first, beside the pipeline's",
  );
});
