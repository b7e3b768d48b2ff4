// Protects the failure envelope for everything outside the happy path: 404, 405, 413, malformed bodies and URLs, and a 500 that leaks nothing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { call, failureMessage, type CallOptions, type CallResult } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;
let caller: Account;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
  caller = await createAccount(workspace, 'failer');
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

/** A failure is always the JSON envelope: never HTML, never a framework default body. */
function assertFailure(result: CallResult, status: number, code: string, what: string): { message: string; field?: string } {
  assert.equal(result.status, status, `${what}: expected ${status}, got ${result.status}: ${result.text}`);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/, `${what}: the failure is not served as JSON`);
  assert.doesNotMatch(result.text, /<html|<!doctype|<body/i, `${what}: the failure is an HTML page`);
  const message = failureMessage(result);
  assert.equal(message.code, code, `${what}: expected code ${code}: ${result.text}`);
  assert.equal(typeof message.message, 'string', `${what}: the message is not a sentence`);
  assert.ok(message.message.length > 0, `${what}: the message is empty`);
  return message;
}

test('an unknown path under /api/v0 answers 404 not_found, pointing to the OpenAPI document and /docs', async () => {
  for (const path of ['/api/v0/nope', '/api/v0/users', '/api/v0/settings/zones', '/api/v0/hello/world']) {
    const message = assertFailure(await call('GET', `${server.url}${path}`), 404, 'not_found', `GET ${path}`);
    assert.match(message.message, /\/api\/v0\/openapi\.json/, `GET ${path}: no pointer to the OpenAPI document: ${message.message}`);
    assert.match(message.message, /\/docs\b/, `GET ${path}: no pointer to /docs: ${message.message}`);
  }
});

test('a misspelt parameter is reported as the word that was sent, not as the one then missing', async () => {
  for (const [path, form, json] of [
    ['/settings', 'timezon=UTC', { timezon: 'UTC' }],
    ['/user', 'nme=Ann', { nme: 'Ann' }],
    ['/hello', 'nam=Ann', { nam: 'Ann' }],
  ] as const) {
    for (const options of [{ form }, { json }]) {
      const message = assertFailure(await call('POST', `${server.api}${path}`, { auth: caller, ...options }), 400, 'unknown_parameter', `POST ${path} ${JSON.stringify(options)}`);
      assert.equal(message.field, Object.keys(json)[0]);
    }
  }
});

test('a JSON string holding a lone surrogate is refused with invalid_parameter, never stored as U+FFFD', async () => {
  for (const escaped of ['a\\ud800b', '\\udfff', 'x\\ud83d']) {
    const body = `{"name":"${escaped}"}`;
    for (const path of ['/user', '/hello']) {
      const message = assertFailure(
        await call('POST', `${server.api}${path}`, { auth: caller, body, headers: { 'content-type': 'application/json' } }),
        400,
        'invalid_parameter',
        `POST ${path} ${body}`,
      );
      assert.equal(message.field, 'name');
    }
  }
  const stored = await call('GET', `${server.api}/user`, { auth: caller });
  assert.ok(!stored.body.data.name.includes('\uFFFD'), `a replacement character was stored: ${stored.body.data.name}`);
  const paired = await call('POST', `${server.api}/hello`, { body: '{"name":"\\ud83d\\ude00"}', headers: { 'content-type': 'application/json' } });
  assert.equal(paired.body?.data?.name, '😀', 'a well-formed surrogate pair was refused or changed');
});

test('an unknown API version answers 404 whose message names v0', async () => {
  for (const path of ['/api/v1/user', '/api/v2/hello', '/api/latest/settings']) {
    const message = assertFailure(await call('GET', `${server.url}${path}`, { auth: caller }), 404, 'not_found', `GET ${path}`);
    assert.match(message.message, /v0/, `GET ${path}: the message does not point to v0: ${message.message}`);
  }
});

test('the root path and paths outside /api answer 404 with the envelope', async () => {
  for (const path of ['/', '/api', '/api/', '/favicon.ico', '/index.html']) {
    assertFailure(await call('GET', `${server.url}${path}`), 404, 'not_found', `GET ${path}`);
  }
});

test('a wrong method on /user, /account, /settings and /hello answers 405 with Allow: GET, HEAD, POST', async () => {
  for (const path of ['/user', '/account', '/settings', '/hello']) {
    for (const method of ['DELETE', 'PUT', 'PATCH']) {
      const result = await call(method, `${server.api}${path}`, { auth: caller });
      assertFailure(result, 405, 'method_not_allowed', `${method} ${path}`);
      assert.equal(result.headers.get('allow'), 'GET, HEAD, POST', `${method} ${path}: wrong Allow header`);
    }
  }
});

test('POST /settings/timezones answers 405 with Allow: GET, HEAD', async () => {
  for (const method of ['POST', 'DELETE']) {
    const result = await call(method, `${server.api}/settings/timezones`, { auth: caller, form: { timezone: 'UTC' } });
    assertFailure(result, 405, 'method_not_allowed', `${method} /settings/timezones`);
    assert.equal(result.headers.get('allow'), 'GET, HEAD', `${method} /settings/timezones: wrong Allow header`);
  }
});

test('a 20 KB body answers 413 body_too_large', async () => {
  const big = 'a'.repeat(20 * 1024);
  assertFailure(await call('POST', `${server.api}/hello`, { form: { name: big } }), 413, 'body_too_large', '20 KB form to /hello');
  assertFailure(await call('POST', `${server.api}/user`, { auth: caller, json: { name: big } }), 413, 'body_too_large', '20 KB JSON to /user');
});

test('bodies that cannot be read answer 400 malformed_body', async () => {
  const json = (body: string): CallOptions => ({ body, headers: { 'content-type': 'application/json' } });
  const bad: readonly [string, CallOptions][] = [
    ['invalid JSON', json('{"name":')],
    ['JSON with a trailing comma', json('{"name":"a",}')],
    ['a JSON array', json('["name"]')],
    ['a JSON string', json('"name"')],
    ['JSON null', json('null')],
    ['a form with %FF (not UTF-8)', { form: 'name=%FF' }],
    ['a form with broken percent-encoding', { form: 'name=%E0%A4%A' }],
    ['a form with a bare %', { form: 'name=100%' }],
  ];
  for (const [what, options] of bad) {
    assertFailure(await call('POST', `${server.api}/hello`, options), 400, 'malformed_body', what);
  }
});

test('bad percent-encoding in the path answers 400 malformed_url', async () => {
  for (const path of ['/api/v0/hello%ZZ', '/api/v0/%E0%A4%A', '/api/v0/hello%C3%28']) {
    assertFailure(await call('GET', `${server.url}${path}`), 400, 'malformed_url', `GET ${path}`);
  }
});

test('a trailing slash reaches the same endpoint', async () => {
  const result = await call('GET', `${server.api}/hello/`);
  assert.equal(result.status, 200, `GET /api/v0/hello/: expected 200, got ${result.status}: ${result.text}`);
  assert.deepEqual(result.body, { status: 'success', messages: [], meta: {}, data: { name: 'World' } });
  const user = await call('GET', `${server.api}/user/`, { auth: caller });
  assert.equal(user.status, 200, `GET /api/v0/user/: expected 200, got ${user.status}: ${user.text}`);
});

test('a query string is ignored', async () => {
  const result = await call('GET', `${server.api}/hello?name=Someone`);
  assert.deepEqual(result.body?.data, { name: 'World' }, `a query parameter changed GET /hello: ${result.text}`);
});

test('every kind of failure is served as a JSON envelope, never HTML', async () => {
  const failures: readonly [string, string, CallOptions, number][] = [
    ['GET', '/nope', {}, 404],
    ['GET', '/api/v1/user', {}, 404],
    ['DELETE', '/api/v0/user', {}, 405],
    ['GET', '/api/v0/user', {}, 401],
    ['GET', '/api/v0/user', { auth: 'Bearer x' }, 401],
    ['POST', '/api/v0/hello', { body: 'x', headers: { 'content-type': 'text/html' } }, 415],
    ['POST', '/api/v0/hello', { form: { name: 'a'.repeat(20_000) } }, 413],
    ['POST', '/api/v0/hello', { form: 'name=%FF' }, 400],
    ['POST', '/api/v0/hello', { form: 'other=1' }, 400],
    ['GET', '/api/v0/%ZZ', {}, 400],
  ];
  for (const [method, path, options, status] of failures) {
    const result = await call(method, `${server.url}${path}`, { headers: { accept: 'text/html' }, ...options });
    assert.equal(result.status, status, `${method} ${path}: expected ${status}, got ${result.status}: ${result.text}`);
    assert.match(result.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}: not served as JSON even to a browser`);
    assert.doesNotMatch(result.text, /<html|<!doctype|<body/i, `${method} ${path}: an HTML page`);
    failureMessage(result);
  }
});

test('an internal failure answers 500 internal_error without internals, and the server keeps serving', async (t) => {
  // Destructive: a workspace and server of its own.
  const broken = createWorkspace();
  const brokenServer = await startServer(broken);
  t.after(async () => {
    await brokenServer.stop();
    broken.cleanup();
  });
  const victim = await createAccount(broken, 'victim');
  const before = await call('GET', `${brokenServer.api}/user`, { auth: victim });
  assert.equal(before.status, 200, `the account should work before the table is dropped: ${before.text}`);

  const db = new DatabaseSync(join(broken.dir, 'live.db'), { timeout: 5000 });
  try {
    db.exec('DROP TABLE api_keys');
  } finally {
    db.close();
  }

  const result = await call('GET', `${brokenServer.api}/user`, { auth: victim });
  assert.equal(result.status, 500, `expected 500 after the keys table vanished, got ${result.status}: ${result.text}`);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/, 'the 500 is not served as JSON');
  assert.equal(result.body?.status, 'error', `a 5xx must have status "error": ${result.text}`);
  assert.equal(failureMessage(result).code, 'internal_error', `wrong code: ${result.text}`);
  for (const leak of ['SQLITE', 'sqlite', 'no such table', 'api_keys', 'DatabaseSync', 'node:']) {
    assert.ok(!result.text.includes(leak), `the 500 body leaks ${JSON.stringify(leak)}: ${result.text}`);
  }
  assert.doesNotMatch(result.text, /^\s*at |\bat \S+ \(|\.(ts|js):\d+/m, `the 500 body carries a stack frame: ${result.text}`);

  const alive = await call('GET', `${brokenServer.api}/hello`);
  assert.equal(alive.status, 200, `the server stopped serving after a 500: ${alive.status}: ${alive.text}`);
  assert.deepEqual(alive.body?.data, { name: 'World' });
  assert.equal(brokenServer.child.exitCode, null, 'the server process exited after a 500');
});
