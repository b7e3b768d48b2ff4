// The console spends its admin token's request budget (ADMIN_RATE_LIMIT_PER_TOKEN) as the admin API does: a test event, an
// outbound request on demand, is refused past it wherever it is asked for, and the refusal is a page that says so. Counted in
// the process (SQLite) and in Redis (PostgreSQL), the two ways the budget is kept; and a search past it, in Chromium.
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../../support/chromium.ts';
import { HANG_MS } from '../../support/eventually.ts';
import { call } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../../support/redis.ts';
import { requiring } from '../../support/requiring.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { bearer, expectData, makeAdminToken } from '../admin/admin-support.ts';
import { consoleRequest, csrfOf, signIn, startConsoleServer, type ConsoleServer } from './console-support.ts';

const BUDGET = 4;
const SETUPS = [
  { name: 'SQLite, counted in the process', skip: undefined, database: async (): Promise<TestDatabase | null> => null, env: {} },
  {
    name: 'PostgreSQL, counted in Redis',
    skip: (await postgresSkipReason()) ?? (await redisSkipReason()),
    database: async (): Promise<TestDatabase | null> => createTestDatabase(),
    env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueKeyPrefix() },
  },
] as const;

for (const setup of SETUPS) {
  const { describe, before, after, test } = requiring(setup.skip);

  describe(`the console and the admin token's request budget (${setup.name})`, () => {
    let database: TestDatabase | null = null;
    let server: ConsoleServer;
    let receiver: Receiver;
    let endpointId: string;

    before(async () => {
      database = await setup.database();
      receiver = await startReceiver();
      server = await startConsoleServer(database, {
        ...setup.env,
        WEBHOOK_ALLOW_PRIVATE: '1',
        ADMIN_RATE_LIMIT_PER_TOKEN: String(BUDGET),
        // The longest window there is: none ends while the test runs, however slow the machine.
        RATE_LIMIT_WINDOW_MS: '86400000',
      });
      // Set up with the server's own token; the budget under test is another token's.
      const added = expectData(await server.call('POST', '/webhooks', { json: { url: receiver.url } }), 201);
      endpointId = added.endpoint_id;
      receiver.setSecret(added.secret);
    });
    after(async () => {
      await server?.stop();
      await receiver?.stop();
      await database?.drop();
    });

    test('test events asked for through the admin API and the console share one budget, and the refusal is a page', async () => {
      const token = await makeAdminToken(server.workspace, 'budgeted');
      // Signing in is judged by the failed-attempt budget, not this one.
      const cookie = await signIn(server, token);
      const viaApi = () => call('POST', `${server.admin}/webhooks/${endpointId}/test`, { auth: bearer(token) });
      for (let i = 1; i <= 2; i++) assert.equal(expectData(await viaApi()).delivered, true, `admin API test event ${i}`);
      // The endpoint's page is the third request, its test button the fourth: the budget's last.
      const page = await consoleRequest(server, 'GET', `/console/webhooks/${endpointId}`, { cookie });
      assert.equal(page.status, 200, page.html.slice(0, 300));
      const csrf = csrfOf(page.html);
      const sent = await consoleRequest(server, 'POST', `/console/webhooks/${endpointId}/test`, { cookie, form: { _csrf: csrf } });
      assert.equal(sent.status, 200, sent.html.slice(0, 300));
      assert.equal(receiver.requests, 3, 'the test events within the budget did not all reach the receiver');

      const refused = await consoleRequest(server, 'POST', `/console/webhooks/${endpointId}/test`, { cookie, form: { _csrf: csrf } });
      assert.equal(refused.status, 429, `the console sent a test event past the token's budget: ${refused.status}`);
      assert.match(refused.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(refused.html, /<h1>Too many requests<\/h1>/);
      assert.match(refused.html, /This admin token has used its requests for now \(ADMIN_RATE_LIMIT_PER_TOKEN/);
      assert.match(refused.html, /rate_limited/);
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter >= 1, `no Retry-After: ${refused.headers.get('retry-after')}`);
      assert.match(refused.html, new RegExp(`Try again in ${retryAfter} seconds`));
      // Pages too: the token's budget is spent for the console as for the API.
      assert.equal((await consoleRequest(server, 'GET', '/console/accounts', { cookie })).status, 429);
      assert.equal((await viaApi()).status, 429, 'the admin API sent a test event past the budget the console spent');
      assert.equal(receiver.requests, 3, 'a refused test event reached the receiver');

      // Another token's budget is its own.
      assert.equal(expectData(await server.call('POST', `/webhooks/${endpointId}/test`)).delivered, true);
      const errors = server.server.output.filter((line) => /"level":(5|6)\d/.test(line));
      assert.deepEqual(errors, [], 'a refusal was logged as a failure of ours');
    });

    test('a change made with the budget\'s last request is not called undone by the refused page its redirect leads to', async () => {
      const token = await makeAdminToken(server.workspace, 'last-request');
      const cookie = await signIn(server, token);
      let page = await consoleRequest(server, 'GET', '/console/accounts', { cookie });
      for (let i = 2; i < BUDGET; i++) page = await consoleRequest(server, 'GET', '/console/accounts', { cookie });
      const username = `made-last-${setup.database === SETUPS[0].database ? 'sqlite' : 'pg'}`;
      // The budget's last request creates the account; the page the browser is sent to next is past it.
      const created = await consoleRequest(server, 'POST', '/console/accounts', { cookie, form: { _csrf: csrfOf(page.html), username } });
      assert.equal(created.status, 303, created.html.slice(0, 300));
      const shown = await consoleRequest(server, 'GET', created.location!, { cookie });
      assert.equal(shown.status, 429);
      assert.equal(expectData(await server.call('GET', `/accounts/${username}`)).username, username, 'test setup: the account was not created');
      assert.doesNotMatch(shown.html, /nothing was done/, 'a refused page said nothing was done, after the change before it was made');
      assert.match(shown.html, /This admin token has used its requests for now/);
    });
  });
}

const inBrowser = requiring(chromiumSkip);
inBrowser.describe('a search past the budget, in a browser', () => {
  const { before, after, test } = inBrowser;
  let server: ConsoleServer;
  let browser: Browser;

  before(async () => {
    [server, browser] = await Promise.all([
      startConsoleServer(null, { ADMIN_RATE_LIMIT_PER_TOKEN: '2', RATE_LIMIT_WINDOW_MS: '86400000' }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }),
    ]);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('is shown as the refusal page, not left as stale results', async () => {
    const page = await (await browser.newContext()).newPage();
    // A hang detector, not a timing check.
    page.setDefaultTimeout(HANG_MS);
    await page.goto(`${server.origin}/console/sign-in`);
    await page.locator('#token').fill(server.token);
    await page.locator('form[action="/console/sign-in"] button[type="submit"]').click();
    // The accounts page is the budget's first request, the first search its second (htmx, the results alone).
    await page.waitForURL(`${server.origin}/console/accounts`);
    await page.locator('#prefix').fill('a');
    await page.waitForURL(`${server.origin}/console/accounts?prefix=a`);
    await page.locator('#prefix').fill('al');
    await page.locator('main h1', { hasText: 'Too many requests' }).waitFor();
    assert.match(await page.locator('main').innerText(), /This admin token has used its requests for now/);
  });
});
