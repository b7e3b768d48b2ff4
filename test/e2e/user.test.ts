// Protects POST /user's display-name rules over HTTP (kept exactly as sent) and the deprecated /account alias.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, failureMessage, type CallOptions, type CallResult } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const LINK = '</api/v0/user>; rel="successor-version"';

let workspace: Workspace;
let server: ServerProcess;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function postName(account: Account, options: CallOptions, path = '/user'): Promise<CallResult> {
  return call('POST', `${server.api}${path}`, { auth: account, ...options });
}

async function storedName(account: Account): Promise<string> {
  const result = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(result.status, 200, `GET /user failed: ${result.text}`);
  return result.body.data.name;
}

function assertInvalidName(result: CallResult, what: string): void {
  assert.equal(result.status, 400, `${what}: expected 400, got ${result.status}: ${result.text}`);
  const message = failureMessage(result);
  assert.deepEqual({ code: message.code, field: message.field }, { code: 'invalid_name', field: 'name' }, `${what}: ${result.text}`);
}

function assertDeprecatedAlias(result: CallResult, what: string): void {
  assert.equal(result.headers.get('deprecation'), 'true', `${what}: missing Deprecation: true`);
  assert.equal(result.headers.get('link'), LINK, `${what}: missing or wrong Link to the successor`);
}

test('names of 1 and of 100 code points are accepted, counted as code points not UTF-16 units', async () => {
  const account = await createAccount(workspace, 'lengths');
  for (const name of ['A', '😀', 'a'.repeat(100), '😀'.repeat(100), `${'é'.repeat(99)}𝄞`]) {
    const result = await postName(account, { form: { name } });
    assert.equal(result.status, 200, `a name of ${[...name].length} code points was refused: ${result.text}`);
    assert.equal(result.body?.data?.name, name, 'the accepted name was not answered back exactly');
    assert.equal(await storedName(account), name, 'GET /user does not show the accepted name');
  }
});

test('a name of 101 code points is refused with invalid_name', async () => {
  const account = await createAccount(workspace, 'toolong');
  for (const name of ['a'.repeat(101), '😀'.repeat(101)]) {
    assertInvalidName(await postName(account, { form: { name } }), `a name of ${[...name].length} code points`);
  }
});

test('empty, whitespace-only and control-character names are refused with invalid_name', async () => {
  const account = await createAccount(workspace, 'badnames', { name: 'Original' });
  const bad: readonly [string, CallOptions][] = [
    ['empty', { form: { name: '' } }],
    ['spaces only', { form: { name: '   ' } }],
    ['other whitespace only', { form: { name: '\u00A0\u3000' } }],
    ['a newline', { form: { name: 'two\nlines' } }],
    ['a carriage return', { form: { name: 'two\rlines' } }],
    ['a tab', { form: { name: 'tab\there' } }],
    ['a NUL sent as %00', { form: 'name=nul%00here' }],
    ['DEL', { form: { name: 'del\u007Fhere' } }],
    ['a line separator', { form: { name: 'line\u2028sep' } }],
    ['a NUL in JSON', { json: { name: 'nul\u0000here' } }],
    ['only zero-width spaces', { form: { name: '\u200B\u200B' } }],
    ['only a soft hyphen, as JSON', { json: { name: '\u00AD' } }],
    ['only Hangul fillers', { form: { name: '\u3164\u3164' } }],
    ['only direction controls', { form: { name: '\u202E\u2066\u2069' } }],
    ['a right-to-left override inside', { form: { name: 'Ann\u202Egnp.exe' } }],
  ];
  for (const [what, options] of bad) assertInvalidName(await postName(account, options), `a name with ${what}`);
  assert.equal(await storedName(account), 'Original', 'a refused name changed the stored name');
});

test('names are kept exactly as sent: surrounding spaces, emoji, right-to-left text', async () => {
  const account = await createAccount(workspace, 'exactly');
  const names = ['  Padded Name  ', ' leading', 'trailing ', 'Zoë 👩🏽‍🚀 Ng', 'مرحبا بالعالم', 'שלום עולם'];
  for (const name of names) {
    for (const encoding of ['form', 'json'] as const) {
      const result = await postName(account, encoding === 'form' ? { form: { name } } : { json: { name } });
      assert.equal(result.status, 200, `${JSON.stringify(name)} (${encoding}) was refused: ${result.text}`);
      assert.equal(result.body?.data?.name, name, `${JSON.stringify(name)} (${encoding}) was not answered back exactly`);
      assert.equal(await storedName(account), name, `GET /user does not return ${JSON.stringify(name)} exactly`);
    }
  }
});

test('a JSON name that is not a string answers 400 invalid_parameter', async () => {
  const account = await createAccount(workspace, 'jsonnumber', { name: 'Unchanged' });
  for (const name of [42, 4.5, true, null, { first: 'a' }]) {
    const result = await postName(account, { json: { name } });
    assert.equal(result.status, 400, `name ${JSON.stringify(name)}: expected 400, got ${result.status}: ${result.text}`);
    const message = failureMessage(result);
    assert.deepEqual({ code: message.code, field: message.field }, { code: 'invalid_parameter', field: 'name' }, `name ${JSON.stringify(name)}: ${result.text}`);
  }
  assert.equal(await storedName(account), 'Unchanged', 'a refused JSON body changed the stored name');
});

test('a JSON array name is a non-string value (invalid_parameter), not a parameter given twice', async () => {
  const account = await createAccount(workspace, 'jsonarray', { name: 'Unchanged' });
  for (const name of [['a'], ['a', 'b']]) {
    const result = await postName(account, { json: { name } });
    assert.equal(result.status, 400, `name ${JSON.stringify(name)}: expected 400, got ${result.status}: ${result.text}`);
    const message = failureMessage(result);
    assert.deepEqual({ code: message.code, field: message.field }, { code: 'invalid_parameter', field: 'name' }, `name ${JSON.stringify(name)}: ${result.text}`);
  }
  assert.equal(await storedName(account), 'Unchanged', 'a refused JSON body changed the stored name');
});

test('GET /account answers like GET /user and marks itself deprecated', async () => {
  const account = await createAccount(workspace, 'aliasget', { name: 'Alias Reader', timezone: 'Europe/Berlin' });
  const user = await call('GET', `${server.api}/user`, { auth: account });
  const alias = await call('GET', `${server.api}/account`, { auth: account });
  assert.equal(alias.status, 200, `GET /account: expected 200, got ${alias.status}: ${alias.text}`);
  assert.deepEqual(alias.body, user.body, 'GET /account answers differently from GET /user');
  assertDeprecatedAlias(alias, 'GET /account');
  assert.equal(user.headers.get('deprecation'), null, 'GET /user must not be marked deprecated');
});

test('POST /account updates the name like POST /user and marks itself deprecated', async () => {
  const account = await createAccount(workspace, 'aliaspost', { name: 'Before' });
  const alias = await postName(account, { form: { name: '  After  ' } }, '/account');
  assert.equal(alias.status, 200, `POST /account: expected 200, got ${alias.status}: ${alias.text}`);
  assertDeprecatedAlias(alias, 'POST /account');
  const user = await call('GET', `${server.api}/user`, { auth: account });
  assert.deepEqual(alias.body, user.body, 'POST /account answered something other than the account GET /user then shows');
  assert.equal(user.body?.data?.name, '  After  ', 'POST /account did not store the name exactly');

  const viaJson = await postName(account, { json: { name: 'From JSON' } }, '/account');
  assert.equal(viaJson.body?.data?.name, 'From JSON', `POST /account with JSON failed: ${viaJson.text}`);
});

test('/account failures carry the deprecation headers too: 401 and 400', async () => {
  const account = await createAccount(workspace, 'aliasfail', { name: 'Kept' });
  const unauthenticated = await call('GET', `${server.api}/account`);
  assert.equal(unauthenticated.status, 401, `GET /account without credentials: ${unauthenticated.status}: ${unauthenticated.text}`);
  assert.equal(failureMessage(unauthenticated).code, 'credentials_required');
  assertDeprecatedAlias(unauthenticated, 'a 401 on GET /account');

  const postUnauthenticated = await call('POST', `${server.api}/account`, { form: { name: 'x' } });
  assert.equal(postUnauthenticated.status, 401, `POST /account without credentials: ${postUnauthenticated.text}`);
  assertDeprecatedAlias(postUnauthenticated, 'a 401 on POST /account');

  const invalid = await postName(account, { form: { name: 'bad\nname' } }, '/account');
  assertInvalidName(invalid, 'POST /account with a newline');
  assertDeprecatedAlias(invalid, 'a 400 on POST /account');

  const missing = await postName(account, { form: '' }, '/account');
  assert.equal(failureMessage(missing).code, 'missing_parameter', `POST /account without name: ${missing.text}`);
  assertDeprecatedAlias(missing, 'a missing_parameter 400 on POST /account');
  assert.equal(await storedName(account), 'Kept', 'a refused POST /account changed the name');
});

test('/account refuses a non-Premium account with 403 like /user', async () => {
  const account = await createAccount(workspace, 'aliasbasic', { premium: false });
  const result = await call('GET', `${server.api}/account`, { auth: account });
  assert.equal(result.status, 403, `expected 403, got ${result.status}: ${result.text}`);
  assert.equal(failureMessage(result).code, 'premium_required');
  assertDeprecatedAlias(result, 'a 403 on GET /account');
});
