// Protects the headers a JSON API owes browsers: security headers and no-store on every answer, and CORS only when configured.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, type CallOptions, type CallResult } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};
const ALLOWED_ORIGIN = 'https://app.example.com';
const EXPOSED =
  'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag, Deprecation, Link, API-Key-Expires, Idempotent-Replayed';

let plain: { workspace: Workspace; server: ServerProcess; alice: Account };
let configured: { workspace: Workspace; server: ServerProcess; alice: Account };

before(async () => {
  const workspace = createWorkspace();
  const configuredWorkspace = createWorkspace({ CORS_ORIGINS: `${ALLOWED_ORIGIN}, http://localhost:3000`, HSTS_MAX_AGE: '31536000' });
  const [alice, configuredAlice] = await Promise.all([createAccount(workspace, 'alice'), createAccount(configuredWorkspace, 'alice')]);
  const [server, configuredServer] = await Promise.all([startServer(workspace), startServer(configuredWorkspace)]);
  plain = { workspace, server, alice };
  configured = { workspace: configuredWorkspace, server: configuredServer, alice: configuredAlice };
});

after(async () => {
  await Promise.all([plain.server.stop(), configured.server.stop()]);
  plain.workspace.cleanup();
  configured.workspace.cleanup();
});

function answers(alice: Account): [string, number, string, string, CallOptions][] {
  return [
    ['GET /user', 200, 'GET', '/api/v0/user', { auth: alice }],
    ['POST /settings', 200, 'POST', '/api/v0/settings', { auth: alice, form: { timezone: 'UTC' } }],
    ['GET /hello', 200, 'GET', '/api/v0/hello', {}],
    ['GET /healthz', 200, 'GET', '/healthz', {}],
    ['a 401', 401, 'GET', '/api/v0/user', {}],
    ['a 400', 400, 'POST', '/api/v0/user', { auth: alice, form: { nme: 'typo' } }],
    ['a 404', 404, 'GET', '/api/v0/nowhere', {}],
    ['a 405', 405, 'DELETE', '/api/v0/settings', {}],
    ['a 413', 413, 'POST', '/api/v0/hello', { form: { name: 'x'.repeat(20_000) } }],
    ['a 415', 415, 'POST', '/api/v0/hello', { body: 'x', headers: { 'content-type': 'text/plain' } }],
    ['a 400 for a URL the router cannot decode', 400, 'GET', '/api/v0/%zz', {}],
  ];
}

function corsHeaders(result: CallResult): string[] {
  return [...result.headers.keys()].filter((name) => name.startsWith('access-control-'));
}

describe('security headers', () => {
  test('every answer, success or failure, carries the security headers and no X-Powered-By', async () => {
    for (const [what, status, method, path, options] of answers(plain.alice)) {
      const result = await call(method, `${plain.server.url}${path}`, options);
      assert.equal(result.status, status, `${what}: ${result.text}`);
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        assert.equal(result.headers.get(name), value, `${what}: ${name} is ${result.headers.get(name)}`);
      }
      assert.equal(result.headers.get('x-powered-by'), null, `${what}: X-Powered-By is sent`);
      assert.equal(result.headers.get('strict-transport-security'), null, `${what}: HSTS is sent without HSTS_MAX_AGE`);
    }
  });

  test('HSTS_MAX_AGE adds Strict-Transport-Security on every answer', async () => {
    for (const [what, , method, path, options] of answers(configured.alice)) {
      const result = await call(method, `${configured.server.url}${path}`, options);
      assert.equal(result.headers.get('strict-transport-security'), 'max-age=31536000', `${what}: wrong or missing HSTS`);
    }
  });

  test('answers carry Cache-Control: no-store; the timezone list may be kept but must be revalidated', async () => {
    for (const [what, , method, path, options] of answers(plain.alice)) {
      const result = await call(method, `${plain.server.url}${path}`, options);
      assert.equal(result.headers.get('cache-control'), 'no-store', `${what}: Cache-Control is ${result.headers.get('cache-control')}`);
    }
    const list = await call('GET', `${plain.server.api}/settings/timezones`, { auth: plain.alice });
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('cache-control'), 'private, no-cache');
    const unauthenticated = await call('GET', `${plain.server.api}/settings/timezones`);
    assert.equal(unauthenticated.headers.get('cache-control'), 'no-store', 'a failure on the list must not be kept');
  });
});

describe('CORS off (the default)', () => {
  test('no answer carries an Access-Control-* header, even to a request with an Origin', async () => {
    for (const [what, , method, path, options] of answers(plain.alice)) {
      const result = await call(method, `${plain.server.url}${path}`, { ...options, headers: { ...options.headers, origin: ALLOWED_ORIGIN } });
      assert.deepEqual(corsHeaders(result), [], `${what}: CORS headers without CORS_ORIGINS`);
    }
  });

  test('a preflight OPTIONS answers 405 with Allow and no CORS header', async () => {
    const result = await call('OPTIONS', `${plain.server.api}/user`, {
      headers: { origin: ALLOWED_ORIGIN, 'access-control-request-method': 'POST' },
    });
    assert.equal(result.status, 405);
    assert.equal(result.headers.get('allow'), 'GET, HEAD, POST');
    assert.deepEqual(corsHeaders(result), []);
  });
});

describe('CORS on (CORS_ORIGINS)', () => {
  const preflight = (origin: string, path = '/user') =>
    call('OPTIONS', `${configured.server.api}${path}`, {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  test('an allowed origin may read answers, failures included, with credentials and the useful headers exposed', async () => {
    for (const [what, , method, path, options] of answers(configured.alice)) {
      if (path.includes('%')) continue; // Fastify runs no hooks for a URL it cannot route, CORS included
      const result = await call(method, `${configured.server.url}${path}`, { ...options, headers: { ...options.headers, origin: ALLOWED_ORIGIN } });
      assert.equal(result.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN, `${what}: origin not allowed`);
      assert.equal(result.headers.get('access-control-allow-credentials'), 'true', `${what}: credentials not allowed`);
      assert.equal(result.headers.get('access-control-expose-headers'), EXPOSED, `${what}: wrong exposed headers`);
      assert.match(result.headers.get('vary') ?? '', /Origin/i, `${what}: no Vary: Origin`);
    }
  });

  test('a preflight from an allowed origin answers 204 with the methods and headers allowed', async () => {
    const result = await preflight(ALLOWED_ORIGIN);
    assert.equal(result.status, 204, result.text);
    assert.equal(result.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
    assert.equal(result.headers.get('access-control-allow-methods'), 'GET, POST');
    assert.equal(
      result.headers.get('access-control-allow-headers'),
      'Authorization, Content-Type, X-Request-Id, If-Match, If-None-Match, Idempotency-Key',
    );
    assert.equal(result.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(result.text, '');
    assert.equal((await preflight('http://localhost:3000', '/settings')).status, 204, 'the second origin of the list is refused');
  });

  test('another origin gets no CORS header: its preflight answers 405 as without CORS', async () => {
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.com', 'http://app.example.com', 'null']) {
      const refused = await preflight(origin);
      assert.equal(refused.status, 405, `${origin}: ${refused.text}`);
      assert.deepEqual(corsHeaders(refused), [], `${origin}: CORS headers on a refused preflight`);
      const simple = await call('GET', `${configured.server.api}/hello`, { headers: { origin } });
      assert.equal(simple.status, 200);
      assert.deepEqual(corsHeaders(simple), [], `${origin}: CORS headers on a GET`);
    }
  });

  test('an OPTIONS that is no preflight, or has no Origin, answers 405 with Allow', async () => {
    const cases: Record<string, string>[] = [{ origin: ALLOWED_ORIGIN }, { 'access-control-request-method': 'POST' }, {}];
    for (const headers of cases) {
      const result = await call('OPTIONS', `${configured.server.api}/user`, { headers });
      assert.equal(result.status, 405, `${JSON.stringify(headers)}: ${result.text}`);
      assert.equal(result.headers.get('allow'), 'GET, HEAD, POST');
      assert.deepEqual(corsHeaders(result), []);
    }
  });
});
