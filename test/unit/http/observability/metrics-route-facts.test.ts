// Protects GET /metrics on the public port as a route of its own: never counted among the answers (not even as "unmatched"),
// logged under its pattern, and served while the process sheds load, like /healthz. (It was once added before the pipeline,
// whose onRoute hook then never saw it.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../../src/app.ts';
import { loadConfig } from '../../../../src/config.ts';
import { loadTimezoneCatalog } from '../../../../src/domain/timezones.ts';
import { createMetrics } from '../../../../src/http/observability/metrics.ts';
import { openStore } from '../../../../src/store/open-store.ts';
import type { Store } from '../../../../src/store/store.ts';

const TOKEN = 'metrics-token-0123456789abcdef0123';
const scrapeHeaders = { authorization: `Bearer ${TOKEN}` };

async function appWith(env: Record<string, string>): Promise<{ app: FastifyInstance; store: Store }> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', METRICS_TOKEN: TOKEN, ...env });
  const store = openStore(config);
  await store.migrate();
  const app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() });
  await app.ready();
  return { app, store };
}

describe('GET /metrics on the public port and the pipeline', () => {
  let app: FastifyInstance;
  let store: Store;
  before(async () => ({ app, store } = await appWith({ MAX_EVENT_LOOP_DELAY_MS: '0' })));
  after(async () => {
    await app?.close();
    await store?.close();
  });

  test('scrapes are not counted (answers: null for METRICS_PATH), least of all as route="unmatched"', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await app.inject({ url: '/metrics', headers: scrapeHeaders })).statusCode, 200);
    const text = (await app.inject({ url: '/metrics', headers: scrapeHeaders })).body;
    const unmatched200 = text.split('\n').filter((line) => line.startsWith('http_requests_total{route="unmatched",method="GET",status="200"}'));
    assert.deepEqual(unmatched200, [], `scrapes were counted as unknown paths:\n${unmatched200.join('\n')}`);
  });
});

describe('GET /metrics while the event loop lags', () => {
  let app: FastifyInstance;
  let store: Store;
  before(async () => ({ app, store } = await appWith({ MAX_EVENT_LOOP_DELAY_MS: '20' })));
  after(async () => {
    await app?.close();
    await store?.close();
  });

  test("is always served (alwaysServed: ['/healthz', METRICS_PATH]), like /healthz", async () => {
    // Keep the loop ~30 ms late on every turn for longer than one sampling second.
    const lag = setInterval(() => {
      const end = Date.now() + 40;
      while (Date.now() < end);
    }, 1);
    try {
      await sleep(2500);
      const health = await app.inject({ url: '/healthz' });
      const metrics = await app.inject({ url: '/metrics', headers: scrapeHeaders });
      const hello = await app.inject({ url: '/api/v0/hello' });
      assert.equal(hello.statusCode, 503, 'the test did not create overload: /hello was served');
      assert.equal(health.statusCode, 200, 'sanity: /healthz is exempt');
      assert.equal(metrics.statusCode, 200, `/metrics was shed while overloaded: ${metrics.body}`);
    } finally {
      clearInterval(lag);
    }
  });
});
