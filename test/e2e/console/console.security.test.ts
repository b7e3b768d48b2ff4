// Who must not get into the console, doesn't: no session, a page of another site, a revoked token, the public port; and what
// is shown once (a key, a webhook secret) is never shown, logged or recorded again. Plain HTTP as a browser sends it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../../support/http.ts';
import { cliOk, REPO_ROOT } from '../../support/server-process.ts';
import { bearer, ENGINES, expectData, makeAdminToken } from '../admin/admin-support.ts';
import { consoleRequest, csrfOf, signIn, startConsoleServer, type ConsoleServer } from './console-support.ts';

// An IP literal: never resolved, so nothing leaves the machine; a browser on another site would send its own origin.
const OTHER_SITE = 'http://203.0.113.7';
const POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A key is aapi_live_, its 12-character id, then its secret and checksum (docs/api.md, API keys). */
function idOf(key: string): string {
  return key.slice('aapi_live_'.length, 'aapi_live_'.length + 12);
}

for (const engine of ENGINES) {
  const { describe, before, after, test } = engine.suite;

  describe(`the console's defences (${engine.name})`, () => {
    let server: ConsoleServer;
    let drop: () => Promise<void> = async () => {};
    let cookie: string;

    before(async () => {
      const made = await engine.database();
      drop = made.drop;
      server = await startConsoleServer(made.database, { WEBHOOK_ALLOW_PRIVATE: '1', TRUST_PROXY: '127.0.0.1' });
      await cliOk(server.workspace, ['users', 'create', 'alice', '--name', 'Alice Liddell', '--premium']);
      cookie = await signIn(server);
    });
    after(async () => {
      await server?.stop();
      await drop();
    });

    async function nameOfAlice(): Promise<string> {
      return expectData(await server.call('GET', '/accounts/alice')).name;
    }

    test('without a session every page and every change goes to the sign-in page, and nothing changes', async () => {
      for (const path of ['/console/accounts', '/console/accounts/alice', '/console/audit', '/console/webhooks']) {
        const answer = await consoleRequest(server, 'GET', path);
        assert.equal(answer.status, 303, `${path} answered ${answer.status} without a session`);
        assert.equal(answer.location?.startsWith('/console/sign-in'), true, `${path} sent the browser to ${answer.location}`);
      }
      const page = await consoleRequest(server, 'GET', '/console/accounts', { cookie });
      const forged = await consoleRequest(server, 'POST', '/console/accounts/alice', { form: { _csrf: csrfOf(page.html), name: 'Mallory' } });
      assert.equal(forged.status, 303);
      assert.equal(forged.location, '/console/sign-in');
      const made = await consoleRequest(server, 'POST', '/console/accounts', { form: { username: 'mallory' } });
      assert.equal(made.status, 303);
      assert.equal(await nameOfAlice(), 'Alice Liddell');
      assert.equal((await server.call('GET', '/accounts/mallory')).status, 404, 'an account was created without a session');
    });

    test('a cross-site POST without the proof is refused and changes nothing, whatever it carries', async () => {
      const page = await consoleRequest(server, 'GET', '/console/accounts/alice', { cookie });
      assert.equal(page.status, 200, page.html.slice(0, 300));
      const csrf = csrfOf(page.html);
      const attempts: { readonly why: string; readonly form: Record<string, string>; readonly origin: string | null }[] = [
        { why: "another site's Origin, even with the right form token", form: { _csrf: csrf, name: 'Mallory' }, origin: OTHER_SITE },
        { why: 'an opaque Origin (null)', form: { _csrf: csrf, name: 'Mallory' }, origin: 'null' },
        { why: 'no form token', form: { name: 'Mallory' }, origin: server.origin },
        { why: 'a wrong form token', form: { _csrf: `${csrf.slice(0, -2)}AA`, name: 'Mallory' }, origin: server.origin },
        { why: 'no Origin and no form token', form: { name: 'Mallory' }, origin: null },
      ];
      for (const attempt of attempts) {
        const answer = await consoleRequest(server, 'POST', '/console/accounts/alice', { cookie, form: attempt.form, origin: attempt.origin });
        assert.equal(answer.status, 403, `${attempt.why}: answered ${answer.status}`);
        assert.match(answer.html, /console_request_unproven/, attempt.why);
      }
      const deleted = await consoleRequest(server, 'POST', '/console/accounts/alice/delete', { cookie, form: {}, origin: OTHER_SITE });
      assert.equal(deleted.status, 403);
      assert.equal(await nameOfAlice(), 'Alice Liddell', 'a refused POST changed the account');
      // The same form, from the console's own page, goes through: the refusals above were about the proof alone.
      const proven = await consoleRequest(server, 'POST', '/console/accounts/alice', { cookie, form: { _csrf: csrf, name: 'Alice L.' } });
      assert.equal(proven.status, 303, proven.html.slice(0, 300));
      assert.equal(await nameOfAlice(), 'Alice L.');
      await server.call('PATCH', '/accounts/alice', { json: { name: 'Alice Liddell' } });
    });

    test("a sign-in posted from another site's page is refused and opens no session", async () => {
      const answer = await consoleRequest(server, 'POST', '/console/sign-in', { form: { token: server.token }, origin: OTHER_SITE });
      assert.equal(answer.status, 403);
      assert.equal(answer.headers.get('set-cookie'), null);
    });

    test("a revoked token's session is refused on its next request, and its forms change nothing", async () => {
      const token = await makeAdminToken(server.workspace, 'revoked-soon');
      const session = await signIn(server, token);
      const page = await consoleRequest(server, 'GET', '/console/accounts/alice', { cookie: session });
      assert.equal(page.status, 200);
      // An admin token is aapi_admin_, its 12-character id, then its secret (docs/api.md, Admin tokens).
      const tokenId = token.slice('aapi_admin_'.length, 'aapi_admin_'.length + 12);
      await cliOk(server.workspace, ['admin-tokens', 'revoke', tokenId]);
      const next = await consoleRequest(server, 'GET', '/console/accounts', { cookie: session });
      assert.equal(next.status, 303, 'the revoked token’s session was still served');
      assert.equal(next.location, '/console/sign-in?notice=expired');
      assert.match(next.headers.get('set-cookie') ?? '', /console_session=;/, 'the dead cookie was not cleared');
      const change = await consoleRequest(server, 'POST', '/console/accounts/alice', { cookie: session, form: { _csrf: csrfOf(page.html), name: 'Revoked' } });
      assert.equal(change.status, 303);
      assert.equal(await nameOfAlice(), 'Alice Liddell');
      // The sign-in form judges it as the admin API does.
      const again = await consoleRequest(server, 'POST', '/console/sign-in', { form: { token } });
      assert.equal(again.status, 401);
      assert.match(again.html, /revoked/);
    });

    test('signing out ends the session on the server, not only in the browser', async () => {
      const session = await signIn(server);
      const page = await consoleRequest(server, 'GET', '/console/accounts', { cookie: session });
      const out = await consoleRequest(server, 'POST', '/console/sign-out', { cookie: session, form: { _csrf: csrfOf(page.html) } });
      assert.equal(out.status, 303);
      const replayed = await consoleRequest(server, 'GET', '/console/accounts', { cookie: session });
      assert.equal(replayed.status, 303, 'the old cookie still opened a page after sign-out');
    });

    test('the cookie is HttpOnly and SameSite=Strict; over TLS a Secure __Host- cookie for /, over plain HTTP for /console only', async () => {
      const plain = await consoleRequest(server, 'POST', '/console/sign-in', { form: { token: server.token } });
      const attributes = (plain.headers.get('set-cookie') ?? '').split(';').map((part) => part.trim().toLowerCase());
      for (const expected of ['httponly', 'samesite=strict', 'path=/console']) assert.ok(attributes.includes(expected), `missing ${expected}: ${attributes}`);
      assert.ok(!attributes.includes('secure'), 'Secure over plain HTTP would never be sent back');
      assert.ok(attributes.some((part) => /^max-age=\d+$/.test(part)), `no Max-Age: ${attributes}`);
      // Through the trusted proxy (TRUST_PROXY=127.0.0.1) that ended TLS: Secure. The Origin is then the https one.
      const response = await fetch(`${server.origin}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https', origin: server.origin.replace('http:', 'https:') },
        body: new URLSearchParams({ token: server.token }).toString(),
      });
      assert.equal(response.status, 303);
      // The __Host- prefix's rules (RFC 6265bis): Secure, Path=/ and no Domain, or the browser drops the cookie.
      const tls = (response.headers.get('set-cookie') ?? '').split(';').map((part) => part.trim());
      assert.match(tls[0]!, /^__Host-console_session=[A-Za-z0-9_-]{43}$/);
      for (const expected of ['httponly', 'samesite=strict', 'path=/', 'secure']) assert.ok(tls.map((part) => part.toLowerCase()).includes(expected), `missing ${expected}: ${tls}`);
      assert.ok(!tls.some((part) => /^domain=/i.test(part)), `a Domain attribute: ${tls}`);
    });

    test('every page carries the policy, and no page has an inline script, handler or style', async () => {
      await cliOk(server.workspace, ['keys', 'create', 'alice', '--label', 'policy']);
      const keys = expectData(await server.call('GET', '/accounts/alice/keys'));
      const keyId = keys[0].key_id as string;
      const endpoint = expectData(await server.call('POST', '/webhooks', { json: { url: 'http://127.0.0.1:9/hook' } }), 201);
      const signInPage = await consoleRequest(server, 'GET', '/console/sign-in');
      const pages = [
        '/console/accounts',
        '/console/accounts?prefix=al',
        '/console/accounts/alice',
        '/console/accounts/alice/delete',
        `/console/accounts/alice/keys/${keyId}`,
        `/console/accounts/alice/keys/${keyId}/roll`,
        `/console/accounts/alice/keys/${keyId}/revoke`,
        '/console/audit',
        '/console/webhooks',
        `/console/webhooks/${endpoint.endpoint_id}`,
        `/console/webhooks/${endpoint.endpoint_id}/remove`,
        '/console/no-such-page',
        '/console/accounts/nobody',
      ];
      for (const path of ['/console/sign-in', ...pages]) {
        const answer = path === '/console/sign-in' ? signInPage : await consoleRequest(server, 'GET', path, { cookie });
        assert.ok([200, 404].includes(answer.status), `${path}: ${answer.status}`);
        assert.equal(answer.headers.get('content-security-policy'), POLICY, `${path}: the policy`);
        assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, path);
        for (const script of answer.html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
          assert.match(script[1]!, /\ssrc="\/console\/assets\/[a-z.]+\?v=[\w-]+"/, `${path}: a script not from the console's own files: ${script[0]}`);
          assert.equal(script[2]!.trim(), '', `${path}: an inline script`);
        }
        assert.doesNotMatch(answer.html, /\son[a-z]+\s*=/i, `${path}: an inline event handler`);
        assert.doesNotMatch(answer.html, /\sstyle\s*=|<style/i, `${path}: an inline style`);
        assert.doesNotMatch(answer.html, /(src|href|action)="(https?:)?\/\//i, `${path}: something from another host`);
        assert.match(answer.html, /<link rel="icon" type="image\/svg\+xml" href="\/console\/assets\/icon\.svg\?v=[\w-]+">/, `${path}: not the shared icon`);
      }
      // The tab's icon is the one /docs shows too (src/page-style/), from the console's own files.
      const iconUrl = /<link rel="icon" [^>]*href="([^"]+)">/.exec(signInPage.html)![1]!;
      const icon = await fetch(`${server.origin}${iconUrl}`);
      assert.equal(icon.status, 200);
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
      assert.deepEqual(Buffer.from(await icon.arrayBuffer()), readFileSync(join(REPO_ROOT, 'src/page-style/icon.svg')));
      await server.call('DELETE', `/webhooks/${endpoint.endpoint_id}`);
    });

    test('the console answers 404 on the public port', async () => {
      for (const path of ['/console/', '/console/sign-in', '/console/accounts', '/console/assets/console.js']) {
        const answer = await call('GET', `${server.server.url}${path}`);
        assert.equal(answer.status, 404, `${path} on the public port answered ${answer.status}`);
        assert.equal(answer.body?.messages?.[0]?.code, 'not_found', answer.text);
      }
      const posted = await call('POST', `${server.server.url}/console/sign-in`, { form: { token: server.token } });
      assert.equal(posted.status, 404);
    });

    test('an issued key and a webhook secret are shown once: never on a later page, in a log line or in the audit trail', async () => {
      const account = await consoleRequest(server, 'GET', '/console/accounts/alice', { cookie });
      const csrf = csrfOf(account.html);
      const issued = await consoleRequest(server, 'POST', '/console/accounts/alice/keys', { cookie, form: { _csrf: csrf, label: 'shown-once', scope: 'read' } });
      assert.equal(issued.status, 201, issued.html.slice(0, 400));
      const key = /<code id="new-secret">(aapi_live_[^<]+)<\/code>/.exec(issued.html)?.[1];
      assert.ok(key !== undefined, 'the issued key was not shown');
      const keyId = idOf(key);
      const rolled = await consoleRequest(server, 'POST', `/console/accounts/alice/keys/${keyId}/roll`, { cookie, form: { _csrf: csrf, overlap: '1h' } });
      assert.equal(rolled.status, 200, rolled.html.slice(0, 400));
      const successor = /<code id="new-secret">(aapi_live_[^<]+)<\/code>/.exec(rolled.html)?.[1];
      assert.ok(successor !== undefined && successor !== key, 'the successor was not shown');
      const added = await consoleRequest(server, 'POST', '/console/webhooks', { cookie, form: { _csrf: csrf, url: 'http://127.0.0.1:9/secret-test' } });
      assert.equal(added.status, 201, added.html.slice(0, 400));
      const secret = /<code id="new-secret">(whsec_[^<]+)<\/code>/.exec(added.html)?.[1];
      assert.ok(secret !== undefined, 'the webhook secret was not shown');
      const endpointId = /we_[A-Za-z0-9_-]+/.exec(added.html)![0];
      // The key works, and its use shows on its page, which must still not show it.
      assert.equal((await call('GET', `${server.server.url}/api/v0/user`, { auth: { username: 'alice', key: successor } })).status, 200);

      const later = [
        '/console/accounts',
        '/console/accounts/alice',
        `/console/accounts/alice/keys/${keyId}`,
        `/console/accounts/alice/keys/${idOf(successor)}`,
        '/console/audit',
        '/console/webhooks',
        `/console/webhooks/${endpointId}`,
      ];
      const secrets = [key, successor, secret, secret.slice('whsec_'.length), server.token];
      for (const path of later) {
        const page = await consoleRequest(server, 'GET', path, { cookie });
        assert.equal(page.status, 200, `${path}: ${page.status}`);
        for (const shown of secrets) assert.ok(!page.html.includes(shown), `${path} shows a secret again`);
      }
      const audit = await server.call('GET', '/audit?limit=100', { auth: bearer(server.token) });
      for (const shown of secrets) assert.ok(!audit.text.includes(shown), 'the audit trail holds a secret');
      const logs = server.server.output.join('\n');
      for (const shown of secrets) assert.ok(!logs.includes(shown), 'a log line holds a secret');
      await server.call('DELETE', `/webhooks/${endpointId}`);
    });
  });
}
