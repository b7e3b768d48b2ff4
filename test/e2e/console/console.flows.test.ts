// Drives every flow of the operator console in headless Chromium against a real server, on SQLite and on PostgreSQL: sign-in,
// accounts, keys (issued by keyboard alone), a key's usage, the audit trail, webhooks, sign-out. Every page is checked with
// axe-core, nothing may be blocked by the policy or load from elsewhere, and each page is photographed.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { HANG_MS, eventually } from '../../support/eventually.ts';
import { call } from '../../support/http.ts';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../../support/chromium.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { requiring } from '../../support/requiring.ts';
import { REPO_ROOT } from '../../support/server-process.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { expectData, makeAdminToken } from '../admin/admin-support.ts';
import { startConsoleServer, type ConsoleServer } from './console-support.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const RESULTS = join(REPO_ROOT, 'test-results', 'console');
// `UPDATE_SCREENSHOTS=1 node --test test/e2e/console/console.flows.test.ts` refreshes the pictures docs/console.md shows.
const DOCS_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'console') : null;

const postgresSkip = await postgresSkipReason();
const ENGINES = [
  { name: 'SQLite', skip: chromiumSkip, database: async (): Promise<TestDatabase | null> => null },
  { name: 'PostgreSQL', skip: chromiumSkip || postgresSkip, database: async (): Promise<TestDatabase | null> => createTestDatabase() },
] as const;

for (const engine of ENGINES) {
  const { describe, before, after, test } = requiring(engine.skip);

  describe(`the operator console in a browser (${engine.name})`, () => {
    let database: TestDatabase | null = null;
    let server: ConsoleServer;
    let receiver: Receiver;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const requests: string[] = [];
    const problems: string[] = [];
    const checked = new Set<string>();
    // What the flows leave for the next ones.
    let issuedKey = '';
    let keyId = '';
    let endpointId = '';
    // The console signs in with a token of its own, so the audit trail tells its changes from the test's admin API calls.
    let consoleToken = '';

    /** A test on the shared page; a failure keeps a picture of what the page showed. */
    function step(name: string, fn: () => Promise<void>): void {
      test(name, async () => {
        try {
          await fn();
        } catch (error) {
          mkdirSync(RESULTS, { recursive: true });
          await page.screenshot({ path: join(RESULTS, `failure-${engine.name}.png`), fullPage: true }).catch(() => {});
          throw error;
        }
      });
    }

    /** axe-core on the page as it is now: no serious or critical violation. Once per kind of page. */
    async function accessible(kind: string): Promise<void> {
      if (checked.has(kind)) return;
      checked.add(kind);
      // Evaluated through the browser's debugging protocol, which the page's policy does not govern (an inline tag would be blocked).
      await page.evaluate(AXE_SOURCE);
      const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`)) as {
        id: string;
        impact: string;
        nodes: string[];
      }[];
      const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
      assert.deepEqual(serious, [], `${kind}: axe-core found ${JSON.stringify(serious, null, 1)}`);
    }

    /** A picture of the page for a person to look at: in test-results/, and in docs/console/ when asked to refresh them. */
    async function photograph(name: string, options: { mask?: string[] } = {}): Promise<void> {
      if (engine.name !== 'SQLite') return;
      const mask = (options.mask ?? []).map((selector) => page.locator(selector));
      for (const dir of [RESULTS, DOCS_SCREENSHOTS]) {
        if (dir === null) continue;
        mkdirSync(dir, { recursive: true });
        await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true, mask, animations: 'disabled' });
      }
    }

    async function heading(): Promise<string> {
      return (await page.locator('main h1').innerText()).trim();
    }

    async function notice(): Promise<string> {
      return (await page.locator('main .notice').innerText()).trim();
    }

    before(async () => {
      database = await engine.database();
      receiver = await startReceiver();
      [server, browser] = await Promise.all([
        startConsoleServer(database, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '100', KEY_USAGE_FLUSH_MS: '100' }),
        chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }),
      ]);
      consoleToken = await makeAdminToken(server.workspace, 'console');
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // The copy button writes to the clipboard, which the test then reads, as a person would paste it.
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
      page = await context.newPage();
      // Every wait on the page is for something that will happen; the bound is a hang detector, not a timing check.
      page.setDefaultTimeout(HANG_MS);
      page.on('request', (request) => requests.push(request.url()));
      page.on('pageerror', (error) => problems.push(`page error: ${error}`));
      page.on('console', (message) => {
        // A page answered 401 or 404 on purpose says so here too; a failed file shows below, as a response.
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console error: ${message.text()}`);
      });
      page.on('response', (response) => {
        if (response.status() >= 400 && response.request().resourceType() !== 'document') problems.push(`${response.status()} for ${response.url()}`);
      });
      // A string, not a function: this suite is typechecked without the DOM's types.
      await page.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
        console.error('CSP violation: ' + event.effectiveDirective + ' blocked ' + (event.blockedURI || 'inline'));
      });`);
    });

    after(async () => {
      await browser?.close();
      await server?.stop();
      await receiver?.stop();
      await database?.drop();
    });

    step('an unsigned visitor lands on the sign-in page; a wrong token is refused there, the right one opens the accounts', async () => {
      await page.goto(`${server.origin}/console/`);
      assert.equal(new URL(page.url()).pathname, '/console/sign-in');
      assert.equal(await heading(), 'Sign in to the console');
      await accessible('sign-in');
      await photograph('sign-in');
      await page.getByLabel('Admin token').fill('aapi_admin_notarealtoken');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('.error-box').waitFor();
      assert.match(await page.locator('.error-box').innerText(), /not a valid admin token/);
      await page.getByLabel('Admin token').fill(consoleToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${server.origin}/console/accounts`);
      assert.equal(await heading(), 'Accounts');
    });

    step('creates accounts, finds them by username as one types, and pages through them', async () => {
      for (const [username, name] of [['alice', 'Alice Liddell'], ['alina', 'Alina'], ['bob', 'Bob']] as const) {
        await page.goto(`${server.origin}/console/accounts`);
        await page.getByLabel('Username', { exact: true }).fill(username);
        await page.getByLabel('Display name').fill(name);
        if (username !== 'bob') await page.getByLabel('Premium').check();
        await page.getByRole('button', { name: 'Create the account' }).click();
        await page.waitForURL(`${server.origin}/console/accounts/${username}?notice=created`);
        assert.equal(await heading(), username);
        assert.equal(await notice(), 'The account was created.');
      }
      assert.equal(expectData(await server.call('GET', '/accounts/alice')).premium, true);
      assert.equal(expectData(await server.call('GET', '/accounts/bob')).premium, false);
      // Enough for a second page (25 a page).
      for (let i = 1; i <= 25; i++) await server.call('POST', '/accounts', { json: { username: `user${String(i).padStart(2, '0')}` } });

      await page.goto(`${server.origin}/console/accounts`);
      await accessible('accounts');
      await photograph('accounts');
      const results = page.locator('#account-results');
      await page.getByLabel('Username starts with').pressSequentially('ali');
      // Bob is gone from the answer to "a" already: the search for "ali" is waited for by its address, then its swap settled.
      await page.waitForURL(/prefix=ali$/);
      await page.locator('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added').first().waitFor({ state: 'detached' });
      await results.getByRole('link', { name: 'bob' }).waitFor({ state: 'detached' });
      const found = await results.locator('tbody tr td:first-child').allInnerTexts();
      assert.deepEqual(found.map((text) => text.trim()).sort(), ['alice', 'alina'], `searching "ali" listed ${found}`);
      assert.equal(new URL(page.url()).searchParams.get('prefix'), 'ali', 'the search is not in the address, to share or reload');

      await page.goto(`${server.origin}/console/accounts`);
      const firstPage = await results.locator('tbody tr').count();
      assert.equal(firstPage, 25);
      await page.getByRole('link', { name: 'Next page' }).click();
      await page.waitForURL(/cursor=/);
      const rest = await results.locator('tbody tr td:first-child').allInnerTexts();
      assert.equal(rest.length, 3, `the second page lists ${rest}`);
    });

    step('Back after searching as one types shows the whole page again, with the earlier search', async () => {
      await page.goto(`${server.origin}/console/accounts`);
      const search = page.getByLabel('Username starts with');
      await search.pressSequentially('al');
      await page.waitForURL(/prefix=al$/);
      await search.pressSequentially('i');
      await page.waitForURL(/prefix=ali$/);
      // htmx pushes the address before it has settled the swap: Back is pressed once it has, as a person's would be.
      await page.locator('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added').first().waitFor({ state: 'detached' });
      await page.goBack();
      await page.waitForURL(/prefix=al$/);
      // The whole page comes back from the server (no history cache), after the address changes: waited for, not raced. The
      // page as served says the search in the field's value attribute; the page left behind had only what was typed.
      await page.locator('input#prefix[value="al"]').waitFor();
      await page.locator('#account-results').getByRole('link', { name: 'alina' }).waitFor();
      assert.equal(await heading(), 'Accounts', 'Back left a page without its heading');
      assert.equal(await page.getByRole('navigation', { name: 'Console sections' }).count(), 1, 'Back left a page without the top bar');
      assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 1, 'Back left a page without the sign-out button');
      assert.equal(await page.getByRole('button', { name: 'Create the account' }).count(), 1, 'Back left a page without its forms');
      assert.equal(await search.inputValue(), 'al');
    });

    step("changes an account's name, timezone (from the list) and Premium", async () => {
      await page.goto(`${server.origin}/console/accounts/bob`);
      await accessible('account');
      await page.getByLabel('Display name').fill('Robert');
      await page.getByLabel('Timezone').selectOption('Asia/Tokyo');
      await page.getByLabel('Premium').check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL(/notice=saved/);
      assert.equal(await notice(), 'The account was saved.');
      const bob = expectData(await server.call('GET', '/accounts/bob'));
      assert.deepEqual([bob.name, bob.timezone, bob.premium], ['Robert', 'Asia/Tokyo', true]);
      assert.equal(await page.getByLabel('Timezone').inputValue(), 'Asia/Tokyo');
    });

    step('issues a key by keyboard alone, shows it once with a copy button, and never again', async () => {
      await page.goto(`${server.origin}/console/accounts/alice`);
      /** Tab until the element `selector` names has the focus, as a keyboard user would. */
      async function tabTo(selector: string): Promise<void> {
        for (let presses = 0; presses < 200; presses++) {
          if (await page.locator(selector).evaluate((element) => element === element.ownerDocument.activeElement)) return;
          await page.keyboard.press('Tab');
        }
        assert.fail(`Tab never reached ${selector}`);
      }
      await tabTo('#label');
      await page.keyboard.type('billing-sync');
      await page.keyboard.press('Tab');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.locator('#scope').inputValue(), 'read', 'the arrow key did not choose the read scope');
      await tabTo('form[action$="/keys"] button[type=submit]');
      await page.keyboard.press('Enter');
      await page.locator('#new-secret').waitFor();
      assert.equal(await heading(), 'Your new key');
      await accessible('key-issued');
      await photograph('key-issued', { mask: ['#new-secret'] });
      issuedKey = (await page.locator('#new-secret').innerText()).trim();
      assert.match(issuedKey, /^aapi_live_/);
      keyId = issuedKey.slice('aapi_live_'.length, 'aapi_live_'.length + 12);
      await tabTo('button.copy');
      await page.keyboard.press('Enter');
      await page.locator('.copy-status', { hasText: 'Copied.' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), issuedKey, 'the copy button did not copy the key');
      await tabTo('main a.button');
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.origin}/console/accounts/alice#keys`);
      const row = page.locator('table.list tbody tr', { hasText: keyId });
      assert.match(await row.innerText(), /billing-sync\s+read\s+active/);
      assert.ok(!(await page.content()).includes(issuedKey), 'the account page shows the key again');
      // It is a real key: the public API takes it.
      assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice', key: issuedKey } })).status, 200);
    });

    step("shows a key's requests per day by outcome as a chart, and the addresses it came from", async () => {
      const auth = { username: 'alice', key: issuedKey };
      const api = `${server.server.url}/api/v0`;
      // 1 already (above) + 2 successes, 2 client errors, 1 refusal (a read key writing).
      for (let i = 0; i < 2; i++) assert.equal((await call('GET', `${api}/settings`, { auth })).status, 200);
      // A parameter /hello does not take: the caller's mistake, from a proven key.
      for (let i = 0; i < 2; i++) assert.equal((await call('POST', `${api}/hello`, { auth, form: { bogus: '1' } })).status, 400);
      assert.equal((await call('POST', `${api}/user`, { auth, form: { name: 'Nope' } })).status, 403);
      const today = new Date().toISOString().slice(0, 10);
      const keyPage = `${server.origin}/console/accounts/alice/keys/${keyId}`;
      const todayRow = page.locator('#usage-table tbody tr', { has: page.locator(`th:text-is("${today}")`) });
      await eventually(
        "today's usage on the key's page",
        async () => {
          await page.goto(keyPage);
          return (await todayRow.locator('td').allInnerTexts()).map(Number);
        },
        (figures) => figures.reduce((sum, figure) => sum + figure, 0) === 6,
        { everyMs: 300 },
      );
      // success, client error, rate-limited, refused, server error (the columns' order, from the header).
      const columns = await page.locator('#usage-table thead th[data-outcome]').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-outcome')));
      assert.deepEqual(columns, ['success', 'client_error', 'rate_limited', 'refused', 'server_error']);
      assert.deepEqual((await todayRow.locator('td').allInnerTexts()).map(Number), [3, 2, 0, 1, 0]);
      assert.equal(await page.locator('#usage-table tbody tr').count(), 30, 'not 30 days');
      // Chart.js drew the same figures.
      const chart = (await page.evaluate(`(() => { const c = Chart.getChart('usage-chart'); return c && { labels: c.data.labels.length, total: c.data.datasets.map((d) => d.data.reduce((a, b) => a + b, 0)), height: c.height }; })()`)) as {
        labels: number;
        total: number[];
        height: number;
      } | null;
      assert.ok(chart !== null, 'no chart on the page');
      assert.deepEqual([chart.labels, chart.total], [30, [3, 2, 0, 1, 0]]);
      assert.ok(chart.height > 100 && chart.height < 400, `the chart is ${chart.height}px tall, not the stylesheet's 18rem`);
      assert.match(await page.locator('main').innerText(), /127\.0\.0\.1/, 'the address it came from is not listed');
      await accessible('key');
      await photograph('key-usage');
    });

    step('rolls a key after a confirmation: the successor is shown once, the old one keeps working for the overlap', async () => {
      await page.goto(`${server.origin}/console/accounts/alice/keys/${keyId}`);
      await page.getByRole('link', { name: 'Roll this key…' }).click();
      assert.equal(await heading(), `Roll key ${keyId}?`);
      await accessible('confirm');
      await photograph('confirm-roll');
      await page.getByLabel('Overlap').fill('1h');
      await page.getByRole('button', { name: 'Roll the key' }).click();
      await page.locator('#new-secret').waitFor();
      const successor = (await page.locator('#new-secret').innerText()).trim();
      assert.notEqual(successor, issuedKey);
      assert.match(await page.locator('main').innerText(), new RegExp(`replaces ${keyId}`));
      for (const key of [issuedKey, successor]) {
        assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice', key } })).status, 200);
      }
      const keys = expectData(await server.call('GET', '/accounts/alice/keys'));
      const old = keys.find((key: { key_id: string }) => key.key_id === keyId);
      assert.ok(old.rolled_into !== null && old.expires_at !== null, 'the old key was not rolled with an end');
      issuedKey = successor;
      keyId = successor.slice('aapi_live_'.length, 'aapi_live_'.length + 12);
    });

    step('revokes a key after a confirmation: servers refuse it from the next request', async () => {
      await page.goto(`${server.origin}/console/accounts/alice/keys/${keyId}`);
      await page.getByRole('link', { name: 'Revoke this key…' }).click();
      assert.equal(await heading(), `Revoke key ${keyId}?`);
      // Cancel first: nothing happens.
      await page.getByRole('link', { name: 'Cancel' }).click();
      assert.equal(await heading(), `Key ${keyId}`);
      assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice', key: issuedKey } })).status, 200);
      await page.getByRole('link', { name: 'Revoke this key…' }).click();
      await page.getByRole('button', { name: 'Revoke the key' }).click();
      await page.waitForURL(/notice=revoked/);
      assert.match(await notice(), /revoked/);
      assert.equal((await page.locator('dd .badge').innerText()).trim(), 'revoked');
      const refused = await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice', key: issuedKey } });
      assert.equal(refused.status, 401, refused.text);
    });

    step('reads the audit trail filtered by account, actor, action and time, a page at a time', async () => {
      await page.goto(`${server.origin}/console/audit`);
      await accessible('audit');
      await photograph('audit');
      const rows = page.locator('main table.list tbody tr');
      assert.equal(await rows.count(), 25);
      await page.getByRole('link', { name: 'Older entries' }).click();
      await page.waitForURL(/cursor=/);
      assert.ok((await rows.count()) > 0, 'the second page is empty');

      await page.goto(`${server.origin}/console/audit`);
      await page.getByLabel('Account').fill('alice');
      await page.getByLabel('Action').selectOption('key.created');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/action=key.created/);
      const actions = await rows.locator('td:nth-child(3)').allInnerTexts();
      assert.deepEqual(actions.map((text) => text.trim()), ['key.created'], `alice's key.created entries: ${actions}`);
      const actor = (await rows.first().locator('td:nth-child(2)').innerText()).trim();
      assert.match(actor, /^admin:[0-9A-Za-z]{12}$/, 'a console change is not recorded as its admin token');

      await page.goto(`${server.origin}/console/audit?actor=${encodeURIComponent(actor)}&action=account.created`);
      assert.equal(await rows.count(), 3, 'the three accounts made in the console, by this actor');
      await page.goto(`${server.origin}/console/audit?actor=cli%3Anobody`);
      assert.equal(await rows.count(), 0);
      // A range in the future holds nothing; one from the past holds everything.
      await page.goto(`${server.origin}/console/audit`);
      await page.getByLabel('From (UTC)').fill('2999-01-01T00:00');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/since=/);
      assert.equal(await rows.count(), 0);
      await page.getByLabel('From (UTC)').fill('2000-01-01T00:00');
      await page.getByLabel('Before (UTC)').fill('2999-01-01T00:00');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/until=/);
      assert.equal(await rows.count(), 25);
    });

    step('adds a webhook endpoint (its secret shown once) and sends it a test event', async () => {
      await page.goto(`${server.origin}/console/webhooks`);
      await page.getByLabel('URL').fill(receiver.url);
      await page.getByLabel('Description').fill('the test receiver');
      await page.getByRole('button', { name: 'Add the endpoint' }).click();
      await page.locator('#new-secret').waitFor();
      await accessible('webhook-added');
      await photograph('webhook-added', { mask: ['#new-secret'] });
      const secret = (await page.locator('#new-secret').innerText()).trim();
      assert.match(secret, /^whsec_/);
      receiver.setSecret(secret);
      endpointId = (await page.locator('dd code').first().innerText()).trim();
      await page.getByRole('link', { name: 'Done: to the endpoint' }).click();
      assert.equal(await heading(), `Endpoint ${endpointId}`);
      await page.getByRole('button', { name: 'Send a test event' }).click();
      await page.locator('#test-heading').waitFor();
      assert.equal((await page.locator('#test-heading').innerText()).trim(), 'Test event delivered');
      // The receiver verified it with the standardwebhooks package, against the secret shown once.
      await receiver.waitFor('the ping', (received) => received.some((event) => event.event.type === 'ping'));
      assert.deepEqual(receiver.rejected, []);
      assert.ok(!(await page.content()).includes(secret), 'the endpoint page shows the secret');
    });

    step("lists an endpoint's deliveries with the receiver's answers, redelivers one, disables, enables and removes it", async () => {
      // A real event: a change made in the console.
      receiver.failWith = 500;
      await page.goto(`${server.origin}/console/accounts/alice`);
      await page.getByLabel('Display name').fill('Alice L.');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL(/notice=saved/);
      const endpointPage = `${server.origin}/console/webhooks/${endpointId}`;
      const attempts = page.locator('main table.list tbody tr');
      await eventually('a failed attempt listed', async () => {
        await page.goto(endpointPage);
        return attempts.count();
      }, (count) => count > 0, { everyMs: 300 });
      assert.match(await attempts.first().innerText(), /500/);
      receiver.failWith = null;
      const before = receiver.received.length;
      await attempts.first().getByRole('button', { name: /Redeliver/ }).click();
      await page.waitForURL(/notice=redelivered/);
      await receiver.waitFor('the redelivered event', (received) => received.length > before && received.at(-1)!.event.type === 'account.updated');
      await eventually('the 204 listed', async () => {
        await page.goto(endpointPage);
        return attempts.first().innerText();
      }, (text) => /204/.test(text), { everyMs: 300 });
      await accessible('webhook');
      await photograph('webhook');

      await page.getByRole('button', { name: 'Disable' }).click();
      await page.waitForURL(/notice=disabled/);
      assert.equal((await page.locator('dd .badge').innerText()).trim(), 'disabled');
      assert.equal(expectData(await server.call('GET', '/webhooks')).find((each: { endpoint_id: string }) => each.endpoint_id === endpointId).enabled, false);
      await page.getByRole('button', { name: 'Enable' }).click();
      await page.waitForURL(/notice=enabled/);
      assert.equal((await page.locator('dd .badge').innerText()).trim(), 'enabled');

      await page.goto(`${server.origin}/console/webhooks`);
      await accessible('webhooks');
      await photograph('webhooks');
      await page.goto(endpointPage);
      await page.getByRole('link', { name: 'Remove…' }).click();
      await page.getByRole('button', { name: 'Remove the endpoint' }).click();
      await page.waitForURL(/notice=removed/);
      assert.equal(await page.locator('main table.list').count(), 0, 'the endpoint is still listed');
      assert.deepEqual(expectData(await server.call('GET', '/webhooks')), []);
    });

    step('deletes an account after a confirmation', async () => {
      await page.goto(`${server.origin}/console/accounts/bob`);
      await page.getByRole('link', { name: 'Delete this account…' }).click();
      assert.equal(await heading(), 'Delete bob?');
      await page.getByRole('button', { name: 'Delete the account' }).click();
      await page.waitForURL(/notice=deleted/);
      assert.equal((await server.call('GET', '/accounts/bob')).status, 404);
      await page.goto(`${server.origin}/console/accounts/bob`);
      assert.equal(await heading(), 'No such account');
      await accessible('error');
    });

    step('signs out: the session is over, and pages lead back to the sign-in', async () => {
      await page.goto(`${server.origin}/console/accounts`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/console\/sign-in\?notice=signed-out/);
      assert.equal(await notice(), 'You are signed out.');
      await page.goto(`${server.origin}/console/audit`);
      assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    });

    step('nothing was blocked by the policy, nothing failed in the page, and nothing came from another host', async () => {
      assert.deepEqual(problems, []);
      const elsewhere = requests.filter((url) => !url.startsWith(`${server.origin}/`));
      assert.deepEqual(elsewhere, []);
    });
  });
}
