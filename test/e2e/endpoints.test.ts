// Protects the seven endpoints as the spec shows them: paths, methods, the full envelope, form and JSON bodies, 415 otherwise.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call, failureMessage, type CallResult } from '../support/http.ts';
import {
  cliOk,
  createAccount,
  createWorkspace,
  REPO_ROOT,
  startServer,
  type Account,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;

const TIMEZONES_META = { description: 'Data is a list of valid timezones.' };
const ZONES: readonly string[] = JSON.parse(readFileSync(join(REPO_ROOT, 'src/domain/timezones.json'), 'utf8')).zones;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function success(data: unknown, meta: object = {}) {
  return { status: 'success', messages: [], meta, data };
}

/** The account's user_id as the CLI reports it: an independent source for the value GET /user must show. */
async function userIdOf(username: string): Promise<number> {
  const shown = JSON.parse(await cliOk(workspace, ['users', 'show', username, '--json'])) as { user_id: unknown };
  assert.ok(Number.isInteger(shown.user_id), `users show --json gave no integer user_id: ${JSON.stringify(shown)}`);
  return shown.user_id as number;
}

function assertSuccess(result: CallResult, expected: unknown, what: string): void {
  assert.equal(result.status, 200, `${what}: expected HTTP 200, got ${result.status}: ${result.text}`);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/, `${what}: success body is not declared as JSON`);
  assert.deepEqual(result.body, expected, `${what}: the envelope differs from the spec`);
}

function assertUnsupportedMediaType(result: CallResult, what: string): void {
  assert.equal(result.status, 415, `${what}: expected 415, got ${result.status}: ${result.text}`);
  assert.equal(failureMessage(result).code, 'unsupported_media_type', `${what}: wrong code: ${result.text}`);
}

test('each of the seven endpoints answers its method and path with a success envelope for a Premium caller', async () => {
  const caller = await createAccount(workspace, 'seven', { name: 'Seven' });
  const endpoints: readonly [string, string, Record<string, string> | undefined][] = [
    ['GET', '/settings', undefined],
    ['GET', '/settings/timezones', undefined],
    ['POST', '/settings', { timezone: 'UTC' }],
    ['GET', '/user', undefined],
    ['POST', '/user', { name: 'Seven' }],
    ['GET', '/hello', undefined],
    ['POST', '/hello', { name: 'Seven' }],
  ];
  for (const [method, path, form] of endpoints) {
    const result = await call(method, `${server.api}${path}`, { auth: caller, ...(form === undefined ? {} : { form }) });
    assert.equal(result.status, 200, `${method} ${path}: expected 200, got ${result.status}: ${result.text}`);
    assert.equal(result.body?.status, 'success', `${method} ${path}: status is not "success": ${result.text}`);
    assert.deepEqual(result.body?.messages, [], `${method} ${path}: messages is not empty`);
  }
});

test('GET /settings returns the caller timezone with meta {}', async () => {
  const caller = await createAccount(workspace, 'getsettings', { timezone: 'Europe/London' });
  const result = await call('GET', `${server.api}/settings`, { auth: caller });
  assertSuccess(result, success({ timezone: 'Europe/London' }), 'GET /settings');
});

test('GET /settings/timezones returns the zone list with meta {description} and nothing else', async () => {
  const caller = await createAccount(workspace, 'listzones');
  const result = await call('GET', `${server.api}/settings/timezones`, { auth: caller });
  assertSuccess(result, success(ZONES, TIMEZONES_META), 'GET /settings/timezones');
  assert.equal(typeof result.body.meta.description, 'string', 'meta.description is not a string');
});

test('GET /user returns user_id (an integer), username, name and timezone with meta {}', async () => {
  const caller = await createAccount(workspace, 'getuser', { name: 'Grace Hopper', timezone: 'America/New_York' });
  const userId = await userIdOf('getuser');
  const result = await call('GET', `${server.api}/user`, { auth: caller });
  assertSuccess(
    result,
    success({ user_id: userId, username: 'getuser', name: 'Grace Hopper', timezone: 'America/New_York' }),
    'GET /user',
  );
  assert.ok(Number.isInteger(result.body.data.user_id), `user_id is not an integer: ${JSON.stringify(result.body.data.user_id)}`);
});

for (const encoding of ['form', 'json'] as const) {
  const body = (values: Record<string, string>) => (encoding === 'form' ? { form: values } : { json: values });

  test(`POST /user with a ${encoding} body answers the submission with the other fields unchanged, and GET /user shows it`, async () => {
    const username = `postuser-${encoding}`;
    const caller = await createAccount(workspace, username, { name: 'Before', timezone: 'Asia/Tokyo' });
    const userId = await userIdOf(username);
    const expected = success({ user_id: userId, username, name: `After ${encoding}`, timezone: 'Asia/Tokyo' });

    const posted = await call('POST', `${server.api}/user`, { auth: caller, ...body({ name: `After ${encoding}` }) });
    assertSuccess(posted, expected, `POST /user (${encoding})`);

    const read = await call('GET', `${server.api}/user`, { auth: caller });
    assertSuccess(read, expected, `GET /user after POST /user (${encoding})`);
  });

  test(`POST /settings with a ${encoding} body answers the submitted timezone, and GET /user and GET /settings show it`, async () => {
    const username = `postsettings-${encoding}`;
    const caller = await createAccount(workspace, username, { name: 'Tz Person' });
    const userId = await userIdOf(username);
    const timezone = encoding === 'form' ? 'America/Argentina/Buenos_Aires' : 'Pacific/Auckland';

    const posted = await call('POST', `${server.api}/settings`, { auth: caller, ...body({ timezone }) });
    assertSuccess(posted, success({ timezone }), `POST /settings (${encoding})`);

    const user = await call('GET', `${server.api}/user`, { auth: caller });
    assertSuccess(user, success({ user_id: userId, username, name: 'Tz Person', timezone }), `GET /user after POST /settings (${encoding})`);

    const settings = await call('GET', `${server.api}/settings`, { auth: caller });
    assertSuccess(settings, success({ timezone }), `GET /settings after POST /settings (${encoding})`);
  });

  test(`POST /hello with a ${encoding} body echoes the name exactly: unicode, surrounding spaces, empty string`, async () => {
    for (const name of ['Ada', 'Zoë 日本語 👋🏽 Ñandú', '  spaced out  ', ' ', '']) {
      const result = await call('POST', `${server.api}/hello`, body({ name }));
      assertSuccess(result, success({ name }), `POST /hello (${encoding}) with name ${JSON.stringify(name)}`);
    }
  });
}

test('POST /hello without name answers 400 missing_parameter for name (empty form, empty JSON object, no body)', async () => {
  const attempts: readonly [string, Parameters<typeof call>[2]][] = [
    ['empty form', { form: '' }],
    ['empty JSON object', { json: {} }],
    ['no body at all', {}],
  ];
  for (const [what, options] of attempts) {
    const result = await call('POST', `${server.api}/hello`, options);
    assert.equal(result.status, 400, `${what}: expected 400, got ${result.status}: ${result.text}`);
    assert.deepEqual(
      { code: failureMessage(result).code, field: failureMessage(result).field },
      { code: 'missing_parameter', field: 'name' },
      `${what}: wrong failure: ${result.text}`,
    );
  }
});

test('GET /hello answers "World" without credentials', async () => {
  const result = await call('GET', `${server.api}/hello`);
  assertSuccess(result, success({ name: 'World' }), 'GET /hello without credentials');
});

test('GET /hello answers the caller display name with credentials, Premium or not', async () => {
  const premium = await createAccount(workspace, 'hello-premium', { name: 'Premium Paula' });
  const basic = await createAccount(workspace, 'hello-basic', { name: 'Basic Bob', premium: false });
  assertSuccess(await call('GET', `${server.api}/hello`, { auth: premium }), success({ name: 'Premium Paula' }), 'GET /hello as Premium');
  assertSuccess(await call('GET', `${server.api}/hello`, { auth: basic }), success({ name: 'Basic Bob' }), 'GET /hello as non-Premium');
});

test('POST /hello accepts credentials from a non-Premium caller and still echoes the submitted name', async () => {
  const basic = await createAccount(workspace, 'hello-post-basic', { name: 'Not This', premium: false });
  const result = await call('POST', `${server.api}/hello`, { auth: basic, form: { name: 'Echo me' } });
  assertSuccess(result, success({ name: 'Echo me' }), 'POST /hello as non-Premium');
});

test('POST bodies as text/plain are refused with 415 on every POST endpoint', async () => {
  const caller = await createAccount(workspace, 'textplain');
  const posts: readonly [string, string][] = [
    ['/hello', 'name=x'],
    ['/user', 'name=x'],
    ['/settings', 'timezone=UTC'],
  ];
  for (const [path, body] of posts) {
    const result = await call('POST', `${server.api}${path}`, { auth: caller, body, headers: { 'content-type': 'text/plain' } });
    assertUnsupportedMediaType(result, `POST ${path} as text/plain`);
  }
});

test('POST bodies as multipart/form-data are refused with 415 on every POST endpoint', async () => {
  const caller = await createAccount(workspace, 'multipart');
  const multipart = (name: string, value: string) =>
    `--XyZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n--XyZ--\r\n`;
  const posts: readonly [string, string, string][] = [
    ['/hello', 'name', 'x'],
    ['/user', 'name', 'x'],
    ['/settings', 'timezone', 'UTC'],
  ];
  for (const [path, name, value] of posts) {
    const result = await call('POST', `${server.api}${path}`, {
      auth: caller,
      body: multipart(name, value),
      headers: { 'content-type': 'multipart/form-data; boundary=XyZ' },
    });
    assertUnsupportedMediaType(result, `POST ${path} as multipart/form-data`);
  }
});

test('a refused POST leaves the account as it was', async () => {
  const caller: Account = await createAccount(workspace, 'unchanged', { name: 'Kept', timezone: 'Europe/Paris' });
  await call('POST', `${server.api}/user`, { auth: caller, body: 'name=Changed', headers: { 'content-type': 'text/plain' } });
  await call('POST', `${server.api}/settings`, { auth: caller, body: 'timezone=UTC', headers: { 'content-type': 'text/plain' } });
  const result = await call('GET', `${server.api}/user`, { auth: caller });
  assert.equal(result.body?.data?.name, 'Kept', `a 415 POST /user changed the name: ${result.text}`);
  assert.equal(result.body?.data?.timezone, 'Europe/Paris', `a 415 POST /settings changed the timezone: ${result.text}`);
});
