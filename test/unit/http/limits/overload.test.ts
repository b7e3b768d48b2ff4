// Protects load shedding: while the event loop lags past MAX_EVENT_LOOP_DELAY_MS, API requests get 503 overloaded; /healthz does not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../../src/app.ts';
import { loadConfig } from '../../../../src/config.ts';
import { loadTimezoneCatalog } from '../../../../src/domain/timezones.ts';
import { LoadMonitor } from '../../../../src/http/limits/overload.ts';
import { createMetrics } from '../../../../src/http/observability/metrics.ts';
import { openStore } from '../../../../src/store/open-store.ts';
import type { Store } from '../../../../src/store/store.ts';
import { eventually } from '../../../support/eventually.ts';

const MAX_EVENT_LOOP_DELAY_MS = 50;

let store: Store;
let app: FastifyInstance;

before(async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: String(MAX_EVENT_LOOP_DELAY_MS) });
  store = openStore(config);
  await store.migrate();
  app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() });
  await app.ready();
});

after(async () => {
  await app?.close();
  await store?.close();
});

/**
 * Makes the event loop lag on purpose: busy turns of `turnMs`, yielding only to setImmediate in between, so every
 * delay sample taken during `totalMs` is a long one (the lag is measured as a mean over each second).
 */
async function lagTheEventLoop(totalMs: number, turnMs: number): Promise<void> {
  const end = Date.now() + totalMs;
  while (Date.now() < end) {
    const turnEnd = Date.now() + turnMs;
    while (Date.now() < turnEnd) {
      // busy: nothing else runs
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('serves normally while the event loop keeps up', async () => {
  const response = await app.inject({ method: 'GET', url: '/api/v0/hello' });
  assert.equal(response.statusCode, 200, response.body);
});

test('answers 503 overloaded with Retry-After while the event loop lags, keeps /healthz up, and recovers', async () => {
  await lagTheEventLoop(2500, 200);

  const shed = await app.inject({ method: 'GET', url: '/api/v0/hello' });
  assert.equal(shed.statusCode, 503, `a request was served while the loop lagged: ${shed.body}`);
  const body = shed.json<{ messages: { code: string }[] }>();
  assert.deepEqual(
    { ...body, messages: body.messages.map((message) => message.code) },
    { status: 'error', messages: ['overloaded'], meta: {}, data: null },
    `not the overloaded envelope: ${shed.body}`,
  );
  assert.match(String(shed.headers['retry-after']), /^[1-9]\d*$/, 'a shed answer must say when to retry');

  const health = await app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 200, `/healthz was shed: ${health.body}`);

  // The lag is sampled every second: two samples of an idle loop bring it back. How soon depends on how busy the machine
  // is, so the wait is bounded only by a hang detector: a monitor that never recovers fails it.
  await eventually(
    'serving again after the loop caught up',
    async () => (await app.inject({ method: 'GET', url: '/api/v0/hello' })).statusCode,
    (status) => status === 200,
    { everyMs: 100 },
  );
});

test('a second in which the loop recorded no delay sample is not lag: nothing is shed for it', (t) => {
  // The monitor's one-second timer is made to come due before the histogram has taken a single sample, as it does when a
  // server starts on a busy machine; before the fix that second counted as an infinite delay and every request got 503.
  t.mock.timers.enable({ apis: ['setInterval'] });
  const monitor = new LoadMonitor({ maxEventLoopDelayMs: 1, retryAfterSeconds: 1 });
  try {
    t.mock.timers.tick(1000);
    assert.equal(monitor.refusal(), null, 'a request was refused as overloaded after a second with no delay sample');
  } finally {
    monitor.stop();
  }
});
