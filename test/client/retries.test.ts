// Retries against real 429s and 503s: the client waits as Retry-After asks (capped), retries `retries` times, then succeeds
// or throws the last failure; other 4xx are never retried.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AccountApiClient } from '../../client/src/index.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { expectApiError, recordingFetch, recordingSleep } from './recording.ts';

interface Deployment {
  readonly workspace: Workspace;
  readonly server: ServerProcess;
  readonly accounts: Account[];
}

async function deploy(env: NodeJS.ProcessEnv, usernames: string[]): Promise<Deployment> {
  const workspace = createWorkspace(env);
  const accounts = await Promise.all(usernames.map((username) => createAccount(workspace, username)));
  return { workspace, server: await startServer(workspace), accounts };
}

// A budget of two requests per key: a minute-long window for giving up, a one-second window for waiting it out.
let minuteWindow: Deployment;
let secondWindow: Deployment;
// Redis on a port where nothing listens: every rate-limited request answers 503 rate_limiter_unavailable.
let redisDown: Deployment;

before(async () => {
  [minuteWindow, secondWindow, redisDown] = await Promise.all([
    deploy({ RATE_LIMIT_PER_KEY: '2' }, ['gives-up', 'post-429']),
    deploy({ RATE_LIMIT_PER_KEY: '2', RATE_LIMIT_WINDOW_MS: '1000' }, ['waits']),
    deploy({ REDIS_URL: 'redis://127.0.0.1:1' }, ['alice']),
  ]);
});

after(async () => {
  for (const { server, workspace } of [minuteWindow, secondWindow, redisDown]) {
    await server?.stop();
    workspace?.cleanup();
  }
});

function clientFor(deployment: Deployment, account: Account, options: ConstructorParameters<typeof AccountApiClient>[0] = {}) {
  return new AccountApiClient({ baseUrl: deployment.server.url, username: account.username, apiKey: account.key, ...options });
}

describe('429 rate_limited', () => {
  test('waits at least Retry-After, capped, retries `retries` times, then throws the 429 with retryAfterSeconds', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep, delays } = recordingSleep();
    const client = clientFor(minuteWindow, minuteWindow.accounts[0]!, { fetch, sleep, retries: 2, maxRetryDelayMs: 30_000 });
    await client.getUser();
    await client.getSettings();
    assert.deepEqual(delays, [], 'no waiting within the budget');

    const error = await expectApiError(() => client.getUser(), { status: 429, code: 'rate_limited' });
    assert.deepEqual(exchanges.map((exchange) => exchange.status), [200, 200, 429, 429, 429], 'one attempt and two retries');
    assert.ok(error.retryAfterSeconds !== undefined && error.retryAfterSeconds > 30, `Retry-After of a minute window: ${error.retryAfterSeconds}`);
    assert.deepEqual(delays, [30_000, 30_000], 'Retry-After (about 60 s) is capped at maxRetryDelayMs');
  });

  test('POST is retried on 429 too (the server did not act on it)', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep, delays } = recordingSleep();
    const client = clientFor(minuteWindow, minuteWindow.accounts[1]!, { fetch, sleep, retries: 1 });
    await client.getUser();
    await client.getUser();
    await expectApiError(() => client.updateUser({ name: 'never stored' }), { status: 429, code: 'rate_limited' });
    assert.deepEqual(exchanges.map((exchange) => `${exchange.method} ${exchange.status}`), ['GET 200', 'GET 200', 'POST 429', 'POST 429']);
    assert.equal(delays.length, 1);
  });

  test('waits out the window and then succeeds', async () => {
    const { fetch, exchanges } = recordingFetch();
    // This sleep really waits: only time refills the budget.
    const { sleep, delays } = recordingSleep({ wait: true });
    const client = clientFor(secondWindow, secondWindow.accounts[0]!, { fetch, sleep, retries: 3 });
    await client.getUser();
    await client.getUser();
    assert.equal((await client.getUser()).username, 'waits');
    const statuses = exchanges.map((exchange) => exchange.status);
    assert.deepEqual(statuses.slice(0, 3), [200, 200, 429]);
    assert.equal(statuses.at(-1), 200, `the last attempt succeeds: ${statuses.join(', ')}`);
    assert.ok(delays.length >= 1 && delays.every((delay) => delay >= 1000), `each wait is at least Retry-After (1 s): ${delays.join(', ')}`);
  });
});

describe('503 rate_limiter_unavailable', () => {
  test('a GET is retried with Retry-After, then throws the 503 with its code and request id', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep, delays } = recordingSleep();
    const client = clientFor(redisDown, redisDown.accounts[0]!, { fetch, sleep });
    const error = await expectApiError(() => client.getUser(), { status: 503, code: 'rate_limiter_unavailable', retryAfterSeconds: 1 });
    assert.deepEqual(exchanges.map((exchange) => exchange.status), [503, 503, 503], 'the default is two retries');
    assert.equal(delays.length, 2);
    assert.ok(delays.every((delay) => delay >= 1000 && delay <= 30_000), `waits honour Retry-After: 1: ${delays.join(', ')}`);
    assert.equal(error.requestId, exchanges[2]?.responseHeaders?.get('x-request-id'), 'the error is the last answer');
  });

  test('a POST is retried on 503 as well', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep } = recordingSleep();
    const client = clientFor(redisDown, redisDown.accounts[0]!, { fetch, sleep, retries: 1 });
    await expectApiError(() => client.updateSettings({ timezone: 'UTC' }), { status: 503, code: 'rate_limiter_unavailable' });
    await expectApiError(() => client.sayHello('x'), { status: 503, code: 'rate_limiter_unavailable' });
    assert.deepEqual(exchanges.map((exchange) => `${exchange.method} ${exchange.status}`), ['POST 503', 'POST 503', 'POST 503', 'POST 503']);
  });

  test('retries: 0 sends exactly once', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep, delays } = recordingSleep();
    await expectApiError(() => clientFor(redisDown, redisDown.accounts[0]!, { fetch, sleep, retries: 0 }).hello(), { status: 503 });
    assert.equal(exchanges.length, 1);
    assert.deepEqual(delays, []);
  });
});
