// The console read on a phone: at 390 px every page fits the screen (tables scroll inside their own box, key ids stay whole),
// and every instant shown is a <time> with the exact instant in its datetime and tooltip, never a raw ISO text. In Chromium.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { HANG_MS, eventually } from '../../support/eventually.ts';
import { call } from '../../support/http.ts';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../../support/chromium.ts';
import { requiring } from '../../support/requiring.ts';
import { REPO_ROOT } from '../../support/server-process.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { expectData } from '../admin/admin-support.ts';
import { startConsoleServer, type ConsoleServer } from './console-support.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const RESULTS = join(REPO_ROOT, 'test-results', 'console');
// `UPDATE_SCREENSHOTS=1` refreshes the phone pictures docs/console.md shows, as console.flows.test.ts does the others.
const DOCS_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'console') : null;
const IN_DOCS = new Set(['phone-account', 'phone-audit']);
/** An iPhone 12 to 15's CSS width, the review's phone. */
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
/** What a person should never have to read: an ISO 8601 instant as the store writes it (2026-11-27T21:52:28.851Z). */
const RAW_INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?/;

const { describe, before, after, test } = requiring(chromiumSkip);

describe('the console on a phone-sized screen', () => {
  let server: ConsoleServer;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  const pages: { name: string; path: string }[] = [];
  let signInOverflow: string[] = [];

  before(async () => {
    receiver = await startReceiver();
    [server, browser] = await Promise.all([
      startConsoleServer(null, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '100', KEY_USAGE_FLUSH_MS: '100' }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }),
    ]);
    // An account with keys in every state a list shows: used, labelled and expiring, read-only, rolled, revoked.
    expectData(await server.call('POST', '/accounts', { json: { username: 'alice.liddell', name: 'Alice Pleasance Liddell', premium: true } }), 201);
    const made: { key_id: string; key: string }[] = [];
    for (const json of [
      { label: 'billing-sync', scope: 'write', expires_at: '2027-03-01' },
      { label: 'reporting-dashboard', scope: 'read' },
      { label: 'old-deploy-script' },
      { label: 'laptop' },
    ]) {
      made.push(expectData(await server.call('POST', '/accounts/alice.liddell/keys', { json }), 201));
    }
    const [used, , rolled, revoked] = made as [{ key_id: string; key: string }, unknown, { key_id: string }, { key_id: string }];
    expectData(await server.call('POST', `/keys/${rolled.key_id}/roll`, { json: { overlap: '1h' } }));
    expectData(await server.call('DELETE', `/keys/${revoked.key_id}`));
    for (let i = 0; i < 3; i++) {
      assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice.liddell', key: used.key } })).status, 200);
    }
    await eventually('the key use and its address written', async () => {
      const usage = expectData(await server.call('GET', `/accounts/alice.liddell/keys/${used.key_id}/usage`));
      const listed = expectData(await server.call('GET', '/accounts/alice.liddell/keys')).find((key: { key_id: string }) => key.key_id === used.key_id);
      return usage.addresses.length > 0 && listed.last_used_at !== null;
    }, (written) => written, { everyMs: 200 });
    // An endpoint with a failed delivery: its attempts table has the widest rows.
    receiver.failWith = 500;
    const endpoint = expectData(await server.call('POST', '/webhooks', { json: { url: receiver.url, description: 'the billing system’s receiver' } }), 201);
    expectData(await server.call('PATCH', '/accounts/alice.liddell', { json: { name: 'Alice P. Liddell' } }));
    await eventually('a failed delivery recorded', async () => expectData(await server.call('GET', `/webhooks/${endpoint.endpoint_id}/deliveries`)).length, (count) => count > 0, { everyMs: 200 });
    pages.push(
      { name: 'accounts', path: '/console/accounts' },
      { name: 'account', path: '/console/accounts/alice.liddell' },
      { name: 'key', path: `/console/accounts/alice.liddell/keys/${used.key_id}` },
      { name: 'revoked-key', path: `/console/accounts/alice.liddell/keys/${revoked.key_id}` },
      { name: 'audit', path: '/console/audit' },
      { name: 'webhooks', path: '/console/webhooks' },
      { name: 'webhook', path: `/console/webhooks/${endpoint.endpoint_id}` },
      { name: 'no-such-account', path: '/console/accounts/nobody' },
    );
    const context = await browser.newContext({ viewport: PHONE });
    page = await context.newPage();
    page.setDefaultTimeout(HANG_MS);
    await page.goto(`${server.origin}/console/sign-in`);
    signInOverflow = await overflowOn('sign-in');
    await photograph('phone-sign-in');
    await page.getByLabel('Admin token').fill(server.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/console/accounts`);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.stop();
  });

  /** What does not fit the phone's width on the page shown: the page wider than the screen, a key id broken over lines. */
  async function overflowOn(name: string): Promise<string[]> {
    const measured = (await page.evaluate(`(() => ({
      scroll: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
      // A key id or prefix broken a character or two per line is unreadable: each is at most two lines tall. (A secret shown
      // once is longer than a phone is wide: it wraps, and is copied with its button.)
      broken: [...document.querySelectorAll('main code')].filter((code) => !code.closest('.secret') && /^[0-9A-Za-z_.:…-]{8,}$/.test(code.textContent.trim()))
        .filter((code) => code.getBoundingClientRect().height > 2.6 * parseFloat(getComputedStyle(code).lineHeight || '20'))
        .map((code) => code.textContent.trim()),
    }))()`)) as { scroll: number; viewport: number; broken: string[] };
    const found: string[] = [];
    if (measured.scroll > measured.viewport) found.push(`${name} is ${measured.scroll} px wide at ${measured.viewport} px`);
    if (measured.broken.length > 0) found.push(`${name} breaks ${measured.broken.join(', ')} over several lines`);
    return found;
  }

  async function photograph(name: string): Promise<void> {
    for (const dir of [RESULTS, IN_DOCS.has(name) ? DOCS_SCREENSHOTS : null]) {
      if (dir === null) continue;
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true, animations: 'disabled' });
    }
  }

  test('at 390 px every page fits the screen: nothing but a table box scrolls sideways, and key ids stay whole', async () => {
    const wide = [...signInOverflow];
    for (const { name, path } of pages) {
      await page.setViewportSize(PHONE);
      await page.goto(`${server.origin}${path}`);
      wide.push(...(await overflowOn(name)));
      await photograph(`phone-${name}`);
      await page.setViewportSize(DESKTOP);
      await photograph(`desktop-${name}`);
    }
    assert.deepEqual(wide, []);
  });

  test('at 390 px the pages still pass axe-core', async () => {
    await page.setViewportSize(PHONE);
    for (const { name, path } of pages) {
      await page.goto(`${server.origin}${path}`);
      await page.evaluate(AXE_SOURCE);
      const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`)) as unknown[];
      assert.deepEqual(violations, [], `${name}: axe-core found ${JSON.stringify(violations)}`);
    }
  });

  test('"Expires on" filled in the browser issues a key that expires as that day begins, 00:00 UTC, on a page that fits', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(`${server.origin}/console/accounts/alice.liddell`);
    const day = new Date(Date.now() + 45 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Label').fill('dated-in-the-browser');
    await page.getByLabel('Expires on').fill(day);
    await page.getByRole('button', { name: 'Issue the key' }).click();
    await page.locator('#new-secret').waitFor();
    assert.deepEqual(await overflowOn('key-issued'), []);
    await photograph('phone-key-issued');
    const issued = expectData(await server.call('GET', '/accounts/alice.liddell/keys')).find((key: { label: string }) => key.label === 'dated-in-the-browser');
    assert.equal(issued.expires_at, `${day}T00:00:00.000Z`);
    assert.equal(await page.locator('dd time').getAttribute('datetime'), `${day}T00:00:00.000Z`);
  });

  test('every instant is a <time> with the exact instant in datetime and title, and no page shows a raw ISO instant', async () => {
    let times = 0;
    for (const { name, path } of pages) {
      await page.goto(`${server.origin}${path}`);
      const text = await page.locator('body').innerText();
      assert.doesNotMatch(text, RAW_INSTANT, `${name} shows a raw instant: ${RAW_INSTANT.exec(text)?.[0]}`);
      const shown = (await page.locator('main time').evaluateAll((elements) =>
        elements.map((element) => ({ datetime: element.getAttribute('datetime'), title: element.getAttribute('title'), text: element.textContent }))
      )) as { datetime: string | null; title: string | null; text: string | null }[];
      for (const time of shown) {
        assert.ok(time.datetime !== null && !Number.isNaN(Date.parse(time.datetime)), `${name}: a <time> without a valid datetime: ${JSON.stringify(time)}`);
        assert.match(time.datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `${name}: not the exact instant`);
        assert.equal(time.title, time.datetime, `${name}: the tooltip is not the exact instant`);
        // The text a person reads: that instant's UTC date and minute (docs/console.md, Times), never parted from its zone.
        const instant = new Date(time.datetime);
        const expected = `${instant.toISOString().slice(0, 10)} ${instant.toISOString().slice(11, 16)} UTC`;
        assert.equal(time.text?.trim(), expected, `${name}: a <time> reads ${time.text}`);
      }
      times += shown.length;
    }
    assert.ok(times >= 20, `only ${times} instants shown on the pages: the seeding did not make what the pages list`);
  });
});
