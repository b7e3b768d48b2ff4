// What a careless operator or a hostile address does to the console beyond the defences file: a filter repeated in the address,
// htmx asking to restore a page after Back, a planted or left-over session cookie, answers holding a secret asked to be kept.
// Plain HTTP as a browser sends it.
import assert from 'node:assert/strict';
import { cliOk } from '../../support/server-process.ts';
import { ENGINES, makeAdminToken } from '../admin/admin-support.ts';
import { consoleRequest, csrfOf, signIn, startConsoleServer, type ConsoleServer } from './console-support.ts';

for (const engine of ENGINES) {
  const { describe, before, after, test } = engine.suite;

  describe(`the console against careless and hostile requests (${engine.name})`, () => {
    let server: ConsoleServer;
    let drop: () => Promise<void> = async () => {};
    let cookie: string;

    before(async () => {
      const made = await engine.database();
      drop = made.drop;
      server = await startConsoleServer(made.database, { WEBHOOK_ALLOW_PRIVATE: '1' });
      await cliOk(server.workspace, ['users', 'create', 'alice', '--name', 'Alice Liddell']);
      cookie = await signIn(server);
    });
    after(async () => {
      await server?.stop();
      await drop();
    });

    /** Log lines at pino's error level (50) or above: what an operator is paged for. */
    function errorLines(): string[] {
      return server.server.output.filter((line) => /"level":(5|6)\d/.test(line));
    }

    test('a search or filter given twice in the address is a 400 naming it, not a 500 logged as our bug', async () => {
      const before = errorLines().length;
      // As the admin API refuses ?actor=a&actor=b (400), so must its pages: a hand-edited or doubled address is the caller's mistake.
      const cases = [
        ['/console/accounts?prefix=al&prefix=bo', 'prefix'],
        ['/console/audit?username=alice&username=bob', 'username'],
        ['/console/audit?actor=cli%3Aa&actor=cli%3Ab', 'actor'],
        ['/console/audit?since=2026-01-01T00%3A00&since=2026-02-01T00%3A00', 'since'],
        ['/console/audit?until=2026-01-01T00%3A00&until=2026-02-01T00%3A00', 'until'],
      ] as const;
      for (const [path, name] of cases) {
        const answer = await consoleRequest(server, 'GET', path, { cookie });
        assert.equal(answer.status, 400, `${path} answered ${answer.status}`);
        assert.match(answer.html, /duplicate_parameter/, `${path}: not refused as a repeated parameter`);
        assert.match(answer.html, new RegExp(`&#39;${name}&#39;`), `${path}: the page does not name '${name}'`);
      }
      assert.deepEqual(errorLines().slice(before), [], 'a repeated parameter was logged as a failure of ours');
    });

    test('a page htmx asks for to restore history after Back is the whole page, not the search results alone', async () => {
      // htmx 2 sends HX-Request with HX-History-Restore-Request on a history cache miss (always, with historyCacheSize 0) and
      // puts the answer in place of the whole <body> (htmx.org/reference: HX-History-Restore-Request).
      const restored = await fetch(`${server.origin}/console/accounts?prefix=al`, {
        headers: { cookie, 'hx-request': 'true', 'hx-history-restore-request': 'true', 'hx-current-url': `${server.origin}/console/accounts?prefix=ali` },
      });
      const html = await restored.text();
      assert.equal(restored.status, 200);
      assert.match(html, /<header class="topbar"/, 'the restored page has no top bar (no navigation, no sign-out)');
      assert.match(html, /id="prefix"/, 'the restored page has no search box');
      assert.match(html, /Create an account/, 'the restored page has no form to create an account');
      // The search as one types still gets the results alone.
      const typed = await fetch(`${server.origin}/console/accounts?prefix=al`, { headers: { cookie, 'hx-request': 'true' } });
      const partial = await typed.text();
      assert.match(partial, /^<div id="account-results">/, partial.slice(0, 200));
      assert.doesNotMatch(partial, /<header/);
    });

    test('sign-in always makes a new session: a planted cookie is never adopted, and the session the browser held ends', async () => {
      // Session fixation: a cookie an attacker chose (right shape, never given out) must not become the session.
      const planted = `console_session=${'A'.repeat(43)}`;
      const fixed = await consoleRequest(server, 'POST', '/console/sign-in', { cookie: planted, form: { token: server.token } });
      assert.equal(fixed.status, 303, fixed.html.slice(0, 300));
      const issued = (fixed.headers.get('set-cookie') ?? '').split(';')[0]!;
      assert.match(issued, /^console_session=[A-Za-z0-9_-]{43}$/);
      assert.notEqual(issued, planted, 'the planted cookie was adopted as the session');
      assert.equal((await consoleRequest(server, 'GET', '/console/accounts', { cookie: planted })).status, 303, 'the planted cookie opens pages');
      // Signing in again from the same browser: the earlier session is over, not left alive for whoever copied its cookie.
      const again = await consoleRequest(server, 'POST', '/console/sign-in', { cookie: issued, form: { token: server.token } });
      assert.equal(again.status, 303);
      const next = (again.headers.get('set-cookie') ?? '').split(';')[0]!;
      assert.notEqual(next, issued, 'signing in again kept the same session');
      const earlier = await consoleRequest(server, 'GET', '/console/accounts', { cookie: issued });
      assert.equal(earlier.status, 303, 'the earlier session still opens pages');
      assert.equal((await consoleRequest(server, 'GET', '/console/accounts', { cookie: next })).status, 200);
    });

    test('two session cookies are none: the page goes to the sign-in, which says why, and signing in is not refused', async () => {
      // As a browser sends a cookie a sibling host set for Domain=<parent>; Path=/console/accounts before this host's own.
      const planter = await signIn(server, await makeAdminToken(server.workspace, 'planter'));
      for (const planted of [planter, `console_session=${'A'.repeat(43)}`, 'console_session=junk']) {
        const page = await consoleRequest(server, 'GET', '/console/accounts', { cookie: `${planted}; ${cookie}` });
        assert.equal(page.status, 303, `with ${planted} beside the session, the page was served`);
        assert.equal(page.location, '/console/sign-in?notice=two-sessions');
        assert.equal(page.headers.get('set-cookie'), null, 'a cookie was cleared, leaving the other to be used alone');
        const change = await consoleRequest(server, 'POST', '/console/accounts', { cookie: `${planted}; ${cookie}`, form: { _csrf: csrfOf((await consoleRequest(server, 'GET', '/console/accounts', { cookie })).html), username: 'planted' } });
        assert.equal(change.status, 303);
        assert.equal((await server.call('GET', '/accounts/planted')).status, 404, 'an account was created with two session cookies');
      }
      const signInPage = await consoleRequest(server, 'GET', '/console/sign-in?notice=two-sessions');
      assert.match(signInPage.html, /Your browser sent two console session cookies, so neither was used/);
      const again = await consoleRequest(server, 'POST', '/console/sign-in', { cookie: `${planter}; ${cookie}`, form: { token: server.token } });
      assert.equal(again.status, 303, again.html.slice(0, 300));
      assert.equal(again.location, '/console/accounts');
      // The planter's session, sent along with the sign-in, is over.
      assert.equal((await consoleRequest(server, 'GET', '/console/accounts', { cookie: planter })).location, '/console/sign-in?notice=expired');
      cookie = (again.headers.get('set-cookie') ?? '').split(';')[0]!;
    });

    test('?notice= shows only the fixed notices, never a property every object has', async () => {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const page = await consoleRequest(server, 'GET', `/console/accounts?notice=${name}`, { cookie });
        assert.equal(page.status, 200);
        assert.doesNotMatch(page.html, /class="notice"|native code|\[object /, `?notice=${name} showed something`);
      }
      assert.match((await consoleRequest(server, 'GET', '/console/accounts?notice=saved', { cookie })).html, /The account was saved\./);
    });

    test('the answers that show a key or a signing secret once tell every cache not to keep them', async () => {
      const account = await consoleRequest(server, 'GET', '/console/accounts/alice', { cookie });
      const csrf = csrfOf(account.html);
      const issued = await consoleRequest(server, 'POST', '/console/accounts/alice/keys', { cookie, form: { _csrf: csrf, label: 'cached?' } });
      assert.equal(issued.status, 201, issued.html.slice(0, 300));
      const keyId = /<dt>Key id<\/dt><dd>([^<]+)<\/dd>/.exec(issued.html)?.[1];
      assert.ok(keyId !== undefined, 'the issued key has no id on its page');
      const rolled = await consoleRequest(server, 'POST', `/console/accounts/alice/keys/${keyId}/roll`, { cookie, form: { _csrf: csrf, overlap: '0' } });
      assert.equal(rolled.status, 200, rolled.html.slice(0, 300));
      const added = await consoleRequest(server, 'POST', '/console/webhooks', { cookie, form: { _csrf: csrf, url: 'http://127.0.0.1:9/cached' } });
      assert.equal(added.status, 201, added.html.slice(0, 300));
      for (const [what, answer] of [['an issued key', issued], ['a rolled key', rolled], ['a signing secret', added]] as const) {
        assert.match(answer.html, /id="new-secret"/, `${what}: no secret shown`);
        assert.equal(answer.headers.get('cache-control'), 'no-store', `${what}: the answer may be cached`);
      }
      const endpointId = /we_[A-Za-z0-9_-]+/.exec(added.html)![0];
      await server.call('DELETE', `/webhooks/${endpointId}`);
    });
  });
}
