// What the console's pages say, read as a browser gets them: a key's last use told once and consistently, a missing account,
// key or endpoint named with a way back, the session lifetimes this server was configured with, and "Expires on" as a date.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call } from '../../support/http.ts';
import { eventually } from '../../support/eventually.ts';
import { expectData } from '../admin/admin-support.ts';
import { consoleRequest, csrfOf, onEveryEngineSignedIn, signIn, startConsoleServer, type ConsoleServer } from './console-support.ts';

const DAY_MS = 86_400_000;

/** The text of a <dd> after the <dt> named `name` on a page of facts. */
function fact(html: string, name: string): string {
  const found = new RegExp(`<dt>${name}</dt><dd>(.*?)</dd>`).exec(html);
  assert.ok(found !== null, `the page has no "${name}":\n${html.slice(0, 1500)}`);
  return found[1]!;
}

/** The <h1> of a page, and the link a failure page offers back. */
function headingOf(html: string): string {
  return /<h1>(.*?)<\/h1>/.exec(html)?.[1] ?? '';
}

function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

onEveryEngineSignedIn("what the console's pages say", ({ suite, server: serverOf, cookie: cookieOf }) => {
  const { test } = suite;
  let server: ConsoleServer;
  let cookie: string;
  suite.beforeEach(() => {
    server = serverOf();
    cookie = cookieOf();
  });

  test("a key's last use is the latest either record holds, and a used key is never said to be unused", async () => {
    const key = expectData(await server.call('POST', '/accounts/alice/keys', { json: { label: 'twice' } }), 201);
    const path = `/console/accounts/alice/keys/${key.key_id}`;
    const fresh = await consoleRequest(server, 'GET', path, { cookie });
    assert.equal(fact(fresh.html, 'Last used'), 'never');
    assert.match(fresh.html, /This key has not been used yet\./);
    // The first use stamps the key (once per KEY_TOUCH_INTERVAL_MS, a minute by default); the second is only in the
    // usage's addresses, written every KEY_USAGE_FLUSH_MS.
    for (let i = 0; i < 2; i++) {
      assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice', key: key.key } })).status, 200);
    }
    // Both written off the request path (the stamp in batches on PostgreSQL): read once both are.
    const { usage, stamped } = await eventually(
      'both uses in the usage, and the stamp',
      async () => ({
        usage: expectData(await server.call('GET', `/accounts/alice/keys/${key.key_id}/usage`)),
        stamped: expectData(await server.call('GET', '/accounts/alice/keys')).find((each: { key_id: string }) => each.key_id === key.key_id).last_used_at,
      }),
      (read) => read.usage.days.at(-1)?.success === 2 && read.stamped !== null,
      { everyMs: 200 },
    );
    const newest = [stamped, usage.addresses[0].last_seen].sort().at(-1);
    const page = await consoleRequest(server, 'GET', path, { cookie });
    assert.doesNotMatch(page.html, /not been used yet/);
    assert.match(fact(page.html, 'Last used'), new RegExp(`<time datetime="${newest}"`), `the stamp was ${stamped}, the address seen ${usage.addresses[0].last_seen}`);
  });

  test('an unknown account, key or endpoint is a 404 page that names what is missing and leads back', async () => {
    const cases = [
      { path: '/console/accounts/nobody', heading: 'No such account', back: '/console/accounts' },
      { path: '/console/accounts/nobody/keys/AAAAAAAAAAAA', heading: 'No such account', back: '/console/accounts' },
      { path: '/console/accounts/alice/keys/AAAAAAAAAAAA', heading: 'No such key', back: '/console/accounts/alice#keys' },
      { path: '/console/webhooks/we_0000000000000000', heading: 'No such endpoint', back: '/console/webhooks' },
      { path: '/console/nowhere', heading: 'No such page', back: '/console/accounts' },
    ];
    for (const expected of cases) {
      const answer = await consoleRequest(server, 'GET', expected.path, { cookie });
      assert.equal(answer.status, 404, `${expected.path} answered ${answer.status}`);
      assert.equal(headingOf(answer.html), expected.heading, expected.path);
      assert.match(answer.html, new RegExp(`<a href="${expected.back}">Back to `), `${expected.path} has no link back to ${expected.back}`);
    }
  });

  test('the sign-in page states the default session lifetimes: 30 minutes idle, 12 hours at most', async () => {
    const page = await consoleRequest(server, 'GET', '/console/sign-in');
    assert.match(page.html, /ends after 30 minutes without a request, 12 hours after signing in at the latest/);
    assert.doesNotMatch(page.html, /some hours/);
  });

  test('"Expires on" is a date field; a date posted is that day\'s 00:00 UTC, and a wrong one is refused saying why', async () => {
    const account = await consoleRequest(server, 'GET', '/console/accounts/alice', { cookie });
    const now = Date.now();
    const input = /<input type="date" id="expires_at" name="expires_at" min="([\d-]+)" max="([\d-]+)"/.exec(account.html);
    assert.ok(input !== null, `no date field for the expiry:\n${account.html}`);
    // The earliest date whose 00:00 UTC is still ahead is tomorrow's (UTC); the latest within 10 years is about 3,652 days on.
    assert.ok([utcDate(now + DAY_MS), utcDate(now + 2 * DAY_MS)].includes(input[1]!), `min is ${input[1]}`);
    assert.ok(Math.abs(Date.parse(input[2]!) - (now + 3652 * DAY_MS)) <= 2 * DAY_MS, `max is ${input[2]}`);

    const csrf = csrfOf(account.html);
    const day = utcDate(now + 30 * DAY_MS);
    const issued = await consoleRequest(server, 'POST', '/console/accounts/alice/keys', { cookie, form: { _csrf: csrf, label: 'dated', scope: 'read', expires_at: day } });
    assert.equal(issued.status, 201, issued.html.slice(0, 800));
    assert.match(fact(issued.html, 'Expires'), new RegExp(`<time datetime="${day}T00:00:00.000Z" title="${day}T00:00:00.000Z"><span>${day}</span> <span>00:00 UTC</span></time>`));
    const listed = expectData(await server.call('GET', '/accounts/alice/keys')).find((each: { label: string }) => each.label === 'dated');
    assert.equal(listed.expires_at, `${day}T00:00:00.000Z`);

    const refusals = [
      { expires_at: 'next tuesday', says: /not an ISO 8601 date/ },
      { expires_at: '2020-01-01', says: /in the past/ },
      { expires_at: utcDate(now + 4000 * DAY_MS), says: /more than 10 years away/ },
      // No such day: not quietly moved to the 2nd of March.
      { expires_at: `${new Date(now).getUTCFullYear() + 1}-02-30`, says: /not a day of the calendar|not an ISO 8601 date/ },
    ];
    for (const refusal of refusals) {
      const answer = await consoleRequest(server, 'POST', '/console/accounts/alice/keys', { cookie, form: { _csrf: csrf, label: 'refused', expires_at: refusal.expires_at } });
      assert.equal(answer.status, 400, `${refusal.expires_at} answered ${answer.status}`);
      assert.equal(headingOf(answer.html), 'The request was refused');
      assert.match(answer.html, /invalid_expiry/, refusal.expires_at);
      assert.match(answer.html, refusal.says, refusal.expires_at);
    }
    const labels = expectData(await server.call('GET', '/accounts/alice/keys')).map((each: { label: string }) => each.label);
    assert.ok(!labels.includes('refused'), 'a refused expiry issued a key');
  });
}, {
  env: { KEY_USAGE_FLUSH_MS: '100' },
  seed: async (server) => {
    expectData(await server.call('POST', '/accounts', { json: { username: 'alice', premium: true } }), 201);
  },
});

describe('what the console says on a server configured otherwise (SQLite)', () => {
  let server: ConsoleServer;

  before(async () => {
    // Usage written once an hour: a key's stamp is in the store long before any of its addresses.
    server = await startConsoleServer(null, { CONSOLE_IDLE_MINUTES: '90', CONSOLE_MAX_HOURS: '1', KEY_USAGE_FLUSH_MS: '3600000' });
  });
  after(async () => {
    await server?.stop();
  });

  test('the sign-in page states the configured lifetimes', async () => {
    const page = await consoleRequest(server, 'GET', '/console/sign-in');
    assert.match(page.html, /ends after 90 minutes without a request, 1 hour after signing in at the latest/);
  });

  test("a key stamped as used but whose addresses are not written yet is not said to be unused", async () => {
    expectData(await server.call('POST', '/accounts', { json: { username: 'bob', premium: true } }), 201);
    const key = expectData(await server.call('POST', '/accounts/bob/keys', { json: {} }), 201);
    assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'bob', key: key.key } })).status, 200);
    const stamped = await eventually('the key stamped', async () => expectData(await server.call('GET', '/accounts/bob/keys'))[0].last_used_at, (at) => at !== null, { everyMs: 100 });
    const cookie = await signIn(server);
    const page = await consoleRequest(server, 'GET', `/console/accounts/bob/keys/${key.key_id}`, { cookie });
    assert.doesNotMatch(page.html, /not been used yet/, 'the page says "Last used" and "not used yet" at once');
    assert.match(fact(page.html, 'Last used'), new RegExp(`<time datetime="${stamped}"`));
  });
});
