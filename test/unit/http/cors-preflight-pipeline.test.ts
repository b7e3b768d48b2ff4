// Protects CORS preflights as answers like any other: with CORS_ORIGINS, @fastify/cors answers them in its own hook, and they
// must still carry X-Request-Id and the fixed headers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { loadTimezoneCatalog } from '../../../src/domain/timezones.ts';
import { createMetrics } from '../../../src/http/observability/metrics.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { Store } from '../../../src/store/store.ts';

const ORIGIN = 'https://app.example.com';
let app: FastifyInstance;
let store: Store;

before(async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', CORS_ORIGINS: ORIGIN });
  store = openStore(config);
  await store.migrate();
  app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() });
  await app.ready();
});
after(async () => {
  await app?.close();
  await store?.close();
});

test('a preflight from an allowed origin carries X-Request-Id and the fixed headers, as every answer does', async () => {
  const answer = await app.inject({
    method: 'OPTIONS',
    url: '/api/v0/user',
    headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'x-request-id': 'preflight-1' },
  });
  assert.equal(answer.statusCode, 204);
  assert.equal(answer.headers['x-request-id'], 'preflight-1', 'no X-Request-Id on the preflight');
  assert.equal(answer.headers['cache-control'], 'no-store', 'no Cache-Control: no-store on the preflight');
  assert.ok(answer.headers['x-content-type-options'] === 'nosniff', 'no security headers on the preflight');
});
