// Protects Basic authentication over HTTP: every 401/403 case, and CLI changes reaching a running server at its very next request.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { issueKey } from '../../src/domain/api-keys.ts';
import { eventually } from '../support/eventually.ts';
import { basic, call, failureMessage, type CallOptions, type CallResult } from '../support/http.ts';
import {
  cliOk,
  createAccount,
  createWorkspace,
  startServer,
  type Account,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

const CHALLENGE = 'Basic realm="account-api", charset="UTF-8"';

let workspace: Workspace;
let server: ServerProcess;
let carol: Account;
let dave: Account;
let erin: Account;

/** The five private routes, each with a body that would be valid for a Premium caller. */
const PRIVATE_ROUTES: readonly { method: string; path: string; form?: Record<string, string> }[] = [
  { method: 'GET', path: '/settings' },
  { method: 'GET', path: '/settings/timezones' },
  { method: 'POST', path: '/settings', form: { timezone: 'UTC' } },
  { method: 'GET', path: '/user' },
  { method: 'POST', path: '/user', form: { name: 'Some Name' } },
];

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
  [carol, dave, erin] = await Promise.all([
    createAccount(workspace, 'carol', { name: 'Carol' }),
    createAccount(workspace, 'dave', { name: 'Dave' }),
    createAccount(workspace, 'erin', { name: 'Erin Basic', premium: false }),
  ]);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function routeCall(route: (typeof PRIVATE_ROUTES)[number], options: CallOptions): Promise<CallResult> {
  return call(route.method, `${server.api}${route.path}`, { ...options, ...(route.form === undefined ? {} : { form: route.form }) });
}

function assertUnauthenticated(result: CallResult, code: string, what: string): void {
  assert.equal(result.status, 401, `${what}: expected 401, got ${result.status}: ${result.text}`);
  assert.equal(failureMessage(result).code, code, `${what}: expected code ${code}: ${result.text}`);
  assert.equal(result.headers.get('www-authenticate'), CHALLENGE, `${what}: wrong or missing WWW-Authenticate header`);
}

/** The key id a person would revoke by, as `keys list --json` shows it. */
async function onlyKeyId(username: string): Promise<string> {
  const keys = JSON.parse(await cliOk(workspace, ['keys', 'list', username, '--json'])) as { key_id: string }[];
  assert.equal(keys.length, 1, `expected exactly one key for ${username}, got ${JSON.stringify(keys)}`);
  return keys[0]!.key_id;
}

test('private endpoints without credentials answer 401 credentials_required with the Basic challenge', async () => {
  for (const route of PRIVATE_ROUTES) {
    assertUnauthenticated(await routeCall(route, {}), 'credentials_required', `${route.method} ${route.path} without credentials`);
  }
});

test('an unknown user and a wrong key get 401 invalid_credentials with byte-identical bodies', async () => {
  const neverStored = issueKey('live').token;
  const attempts: readonly [string, Account][] = [
    ['unknown user with a real key', { username: 'nobody-here', key: carol.key }],
    ['known user with the key of another account', { username: 'carol', key: dave.key }],
    ['known user with a well-formed key that was never stored', { username: 'carol', key: neverStored }],
    ['unknown user with a well-formed key that was never stored', { username: 'nobody-here', key: neverStored }],
  ];
  const bodies = new Set<string>();
  for (const [what, auth] of attempts) {
    for (const route of PRIVATE_ROUTES) {
      const result = await routeCall(route, { auth });
      assertUnauthenticated(result, 'invalid_credentials', `${what} on ${route.method} ${route.path}`);
      bodies.add(result.text);
    }
  }
  assert.equal(bodies.size, 1, `an unknown user and a wrong key must be indistinguishable; got bodies:\n${[...bodies].join('\n')}`);
});

test('a password that is not a well-formed key gets 401 malformed_key', async () => {
  const flippedChecksum = carol.key.slice(0, -1) + (carol.key.endsWith('A') ? 'B' : 'A');
  const malformed: readonly [string, string][] = [
    ['plain text', 'not-a-key'],
    ['empty', ''],
    ['truncated', carol.key.slice(0, -3)],
    ['one character too many', `${carol.key}A`],
    ['wrong checksum', flippedChecksum],
    ['unknown prefix', carol.key.replace('aapi_live_', 'aapi_test_')],
  ];
  for (const [what, key] of malformed) {
    assertUnauthenticated(await call('GET', `${server.api}/user`, { auth: { username: 'carol', key } }), 'malformed_key', `key ${what}`);
  }
});

test('an Authorization header that is not decodable Basic credentials gets 401 malformed_credentials', async () => {
  const headers: readonly [string, string][] = [
    ['a Bearer token', `Bearer ${carol.key}`],
    ['Basic with bad base64', 'Basic !!!not*base64!!!'],
    ['Basic with nothing after it', 'Basic '],
    ['Basic without a colon', `Basic ${Buffer.from(`carol${carol.key}`).toString('base64')}`],
    ['Basic with non-UTF-8 bytes', `Basic ${Buffer.from([0x63, 0xff, 0xfe, 0x3a, 0x61]).toString('base64')}`],
  ];
  for (const [what, authorization] of headers) {
    assertUnauthenticated(await call('GET', `${server.api}/user`, { auth: authorization }), 'malformed_credentials', what);
  }
});

test('the scheme name Basic is accepted in any letter case', async () => {
  const authorization = basic('carol', carol.key).replace('Basic', 'bAsIc');
  const result = await call('GET', `${server.api}/user`, { auth: authorization });
  assert.equal(result.status, 200, `expected 200 with a lower-case scheme name, got ${result.status}: ${result.text}`);
});

test('wrong credentials on the public /hello answer 401, so a client can test its credentials there', async () => {
  const wrong: readonly [string, CallOptions['auth']][] = [
    ['a wrong key', { username: 'carol', key: dave.key }],
    ['an unknown user', { username: 'nobody-here', key: carol.key }],
  ];
  for (const method of ['GET', 'POST']) {
    for (const [what, auth] of wrong) {
      const result = await call(method, `${server.api}/hello`, { auth, ...(method === 'POST' ? { form: { name: 'x' } } : {}) });
      assertUnauthenticated(result, 'invalid_credentials', `${method} /hello with ${what}`);
    }
    const malformed = await call(method, `${server.api}/hello`, { auth: { username: 'carol', key: 'garbage' }, ...(method === 'POST' ? { form: { name: 'x' } } : {}) });
    assertUnauthenticated(malformed, 'malformed_key', `${method} /hello with a malformed key`);
  }
});

test('a non-Premium account gets 403 premium_required on all five private routes', async () => {
  for (const route of PRIVATE_ROUTES) {
    const result = await routeCall(route, { auth: erin });
    assert.equal(result.status, 403, `${route.method} ${route.path} as non-Premium: expected 403, got ${result.status}: ${result.text}`);
    assert.equal(failureMessage(result).code, 'premium_required', `${route.method} ${route.path}: wrong code: ${result.text}`);
  }
});

test('a non-Premium account is served on /hello', async () => {
  const got = await call('GET', `${server.api}/hello`, { auth: erin });
  assert.equal(got.status, 200, `GET /hello as non-Premium: ${got.status}: ${got.text}`);
  assert.equal(got.body?.data?.name, 'Erin Basic', `GET /hello as non-Premium did not greet by display name: ${got.text}`);
  const posted = await call('POST', `${server.api}/hello`, { auth: erin, form: { name: 'Erin' } });
  assert.equal(posted.status, 200, `POST /hello as non-Premium: ${posted.status}: ${posted.text}`);
});

test('the username is matched ignoring case', async () => {
  const mixed = await createAccount(workspace, 'MixedCase', { name: 'Mixed' });
  for (const username of ['MixedCase', 'mixedcase', 'MIXEDCASE', 'mIxEdCaSe']) {
    const result = await call('GET', `${server.api}/user`, { auth: { username, key: mixed.key } });
    assert.equal(result.status, 200, `logging in as ${username}: expected 200, got ${result.status}: ${result.text}`);
    assert.equal(result.body?.data?.username, 'MixedCase', `logging in as ${username} did not reach the MixedCase account: ${result.text}`);
  }
});

test('rejects a sandbox key on a live server with 401 wrong_environment', async () => {
  const sandboxKey = issueKey('sandbox').token;
  assertUnauthenticated(
    await call('GET', `${server.api}/user`, { auth: { username: 'carol', key: sandboxKey } }),
    'wrong_environment',
    'a sandbox key on GET /user',
  );
  assertUnauthenticated(
    await call('GET', `${server.api}/hello`, { auth: { username: 'carol', key: sandboxKey } }),
    'wrong_environment',
    'a sandbox key on GET /hello',
  );
});

test('keys revoke takes effect on the running server at the very next request (401 key_revoked)', async () => {
  const account = await createAccount(workspace, 'revokee');
  const keyId = await onlyKeyId('revokee');
  const before = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(before.status, 200, `the key should work before it is revoked: ${before.text}`);

  await cliOk(workspace, ['keys', 'revoke', keyId]);
  // The very next request (docs/api.md), not one within some time: the CLI has exited, so its change is committed.
  const last = await call('GET', `${server.api}/user`, { auth: account });
  assert.ok(last.status === 401 && last.body?.messages?.[0]?.code === 'key_revoked', `a revoked key was still not refused with key_revoked on the first request after the CLI exited; answer ${last.status}: ${last.text}`);
  assertUnauthenticated(last, 'key_revoked', 'a revoked key');
});

test('users delete takes effect on the running server at the very next request (401 invalid_credentials)', async () => {
  const account = await createAccount(workspace, 'deletee');
  const before = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(before.status, 200, `the account should work before it is deleted: ${before.text}`);

  await cliOk(workspace, ['users', 'delete', 'deletee']);
  // The very next request (docs/api.md), not one within some time: the CLI has exited, so its change is committed.
  const last = await call('GET', `${server.api}/user`, { auth: account });
  assert.ok(last.status === 401 && last.body?.messages?.[0]?.code === 'invalid_credentials', `a deleted account was still served on the first request after the CLI exited; answer ${last.status}: ${last.text}`);
  assertUnauthenticated(last, 'invalid_credentials', 'a deleted account');
});

test('users premium off takes effect on the running server at the very next request (403 premium_required)', async () => {
  const account = await createAccount(workspace, 'demotee');
  const before = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(before.status, 200, `the account should be served before Premium is removed: ${before.text}`);

  await cliOk(workspace, ['users', 'premium', 'demotee', 'off']);
  // The very next request (docs/api.md), not one within some time: the CLI has exited, so its change is committed.
  const last = await call('GET', `${server.api}/user`, { auth: account });
  assert.ok(last.status === 403 && last.body?.messages?.[0]?.code === 'premium_required', `an account without Premium was still served on the first request after the CLI exited; answer ${last.status}: ${last.text}`);
  assert.equal(failureMessage(last).code, 'premium_required');

  const hello = await call('GET', `${server.api}/hello`, { auth: account });
  assert.equal(hello.status, 200, `the demoted account should still be served on /hello: ${hello.text}`);
});

test('users premium on takes effect on the running server at the very next request', async () => {
  const account = await createAccount(workspace, 'promotee', { premium: false });
  const before = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(before.status, 403, `the account should be refused before Premium is granted: ${before.text}`);

  await cliOk(workspace, ['users', 'premium', 'promotee', 'on']);
  // The very next request (docs/api.md), not one within some time: the CLI has exited, so its change is committed.
  const last = await call('GET', `${server.api}/user`, { auth: account });
  assert.ok(last.status === 200, `a newly Premium account was still refused on the first request after the CLI exited; answer ${last.status}: ${last.text}`);
});

test('keys list --json shows last_used_at once the key has been used', async () => {
  const account = await createAccount(workspace, 'tracked');
  const listed = async () => {
    const keys = JSON.parse(await cliOk(workspace, ['keys', 'list', 'tracked', '--json'])) as { last_used_at: string | null }[];
    assert.equal(keys.length, 1, `expected one key, got ${JSON.stringify(keys)}`);
    return keys[0]!;
  };
  assert.equal((await listed()).last_used_at, null, 'a key that was never used already has last_used_at');

  const calledFrom = Date.now();
  const result = await call('GET', `${server.api}/hello`, { auth: account });
  const calledUntil = Date.now();
  assert.equal(result.status, 200, `GET /hello with the key failed: ${result.text}`);

  // The use is recorded off the request path, after the answer: waited for (the bound is a hang detector), not assumed done.
  const { last_used_at: lastUsed } = await eventually('last_used_at recorded after the key was used', listed, (key) => key.last_used_at !== null);
  const lastUsedMs = Date.parse(lastUsed!);
  assert.ok(Number.isFinite(lastUsedMs), `last_used_at is not a timestamp: ${lastUsed}`);
  // A second of slack either side allows a store that keeps whole seconds.
  assert.ok(
    lastUsedMs >= calledFrom - 1000 && lastUsedMs <= calledUntil + 1000,
    `last_used_at ${lastUsed} is not the time of the call (${new Date(calledFrom).toISOString()})`,
  );
});

