// The client against the real server: every method returns the data the specification describes, and failures come back
// as AccountApiError with the documented status, code and field.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AccountApiClient, type User } from '../../client/src/index.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { call } from '../support/http.ts';
import { expectApiError, recordingFetch } from './recording.ts';

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let basic: Account;

before(async () => {
  workspace = createWorkspace();
  [alice, basic] = await Promise.all([
    createAccount(workspace, 'alice', { name: 'Alice' }),
    createAccount(workspace, 'basic', { name: 'Basic Bob', premium: false }),
  ]);
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

const clientFor = (account: Account, options: ConstructorParameters<typeof AccountApiClient>[0] = {}) =>
  new AccountApiClient({ baseUrl: server.url, username: account.username, apiKey: account.key, ...options });

describe('every endpoint', () => {
  test('hello() says World without credentials and the display name with them', async () => {
    assert.deepEqual(await new AccountApiClient({ baseUrl: server.url }).hello(), { name: 'World' });
    assert.deepEqual(await clientFor(basic).hello(), { name: 'Basic Bob' }, 'a non-Premium account may call /hello');
  });

  test('sayHello(name) echoes the name exactly, form-encoded so &, =, + and non-ASCII survive', async () => {
    const name = 'Ada Lovelace & co = 1+1 ✓ Zoë';
    const { fetch, exchanges } = recordingFetch();
    assert.deepEqual(await clientFor(alice, { fetch }).sayHello(name), { name });
    assert.equal(exchanges[0]?.requestHeaders.get('content-type'), 'application/x-www-form-urlencoded');
    assert.equal(exchanges[0]?.body, new URLSearchParams({ name }).toString());
    assert.deepEqual(await new AccountApiClient({ baseUrl: server.url }).sayHello(''), { name: '' }, 'the empty name is echoed too');
  });

  test('getUser, updateUser, getSettings, updateSettings and getUser again tell one consistent story', async () => {
    const client = clientFor(alice);
    const user: User = await client.getUser();
    assert.ok(Number.isSafeInteger(user.user_id) && user.user_id > 0, `user_id should be a positive integer: ${user.user_id}`);
    assert.deepEqual(user, { user_id: user.user_id, username: 'alice', name: 'Alice', timezone: 'UTC' });

    const renamed = await client.updateUser({ name: 'Alice Liddell 🐇' });
    assert.deepEqual(renamed, { ...user, name: 'Alice Liddell 🐇' }, 'POST /user changes the name and nothing else');

    assert.deepEqual(await client.getSettings(), { timezone: 'UTC' });
    assert.deepEqual(await client.updateSettings({ timezone: 'Europe/Kyiv' }), { timezone: 'Europe/Kyiv' });
    assert.deepEqual(await client.getSettings(), { timezone: 'Europe/Kyiv' });
    assert.deepEqual(await client.getUser(), { ...renamed, timezone: 'Europe/Kyiv' });
  });

  test('listTimezones() returns the list, in code-point order with UTC last, and its description', async () => {
    const { timezones, description } = await clientFor(alice).listTimezones();
    assert.equal(description, 'Data is a list of valid timezones.');
    assert.ok(timezones.length > 300, `expected the whole tz database, got ${timezones.length} names`);
    assert.equal(timezones.at(-1), 'UTC');
    const zones = timezones.slice(0, -1);
    assert.deepEqual(zones, [...zones].sort(), 'entries before UTC are in ascending order');
    const areas = new Set(zones.map((zone) => zone.split('/')[0]));
    assert.deepEqual([...areas].sort(), ['Africa', 'America', 'Antarctica', 'Arctic', 'Asia', 'Atlantic', 'Australia', 'Europe', 'Indian', 'Pacific']);
    assert.ok(timezones.includes('America/Argentina/Buenos_Aires'), 'nested names are listed');
  });
});

describe('the timezone list is revalidated with ETag', () => {
  test('the second call sends If-None-Match, gets a 304 and returns the same list', async () => {
    const { fetch, exchanges } = recordingFetch();
    const client = clientFor(alice, { fetch });
    const first = await client.listTimezones();
    const second = await client.listTimezones();
    assert.deepEqual(exchanges.map((exchange) => exchange.status), [200, 304]);
    const etag = exchanges[0]?.responseHeaders?.get('etag');
    assert.ok(etag, 'the list carries an ETag');
    assert.equal(exchanges[1]?.requestHeaders.get('if-none-match'), etag);
    assert.deepEqual(second, first);
  });

  test('the cached list belongs to one client: a caller changing its copy or a second client does not share it', async () => {
    const { fetch, exchanges } = recordingFetch();
    const client = clientFor(alice, { fetch });
    const first = await client.listTimezones();
    first.timezones.length = 0;
    assert.ok((await client.listTimezones()).timezones.length > 300, 'the kept list is not the one handed out');
    await clientFor(alice, { fetch }).listTimezones();
    assert.deepEqual(exchanges.map((exchange) => exchange.status), [200, 304, 200], 'a new client starts without a cached list');
  });
});

describe('failures are AccountApiError', () => {
  test('an invalid timezone: 400 invalid_timezone on field timezone, with the server sentence and request id; not retried', async () => {
    const { fetch, exchanges } = recordingFetch();
    const error = await expectApiError(() => clientFor(alice, { fetch }).updateSettings({ timezone: 'europe/paris' }), {
      status: 400,
      code: 'invalid_timezone',
      field: 'timezone',
    });
    assert.match(error.message, /Did you mean Europe\/Paris\?/);
    assert.deepEqual(error.messages, [{ code: 'invalid_timezone', message: error.message, field: 'timezone' }]);
    assert.equal(error.requestId, exchanges[0]?.responseHeaders?.get('x-request-id'));
    assert.ok(error.requestId, 'the request id is kept');
    assert.ok(error instanceof Error && error.name === 'AccountApiError');
    assert.equal(exchanges.length, 1, 'a 400 is never retried');
  });

  test('an invalid name: 400 invalid_name on field name', async () => {
    await expectApiError(() => clientFor(alice).updateUser({ name: '   ' }), { status: 400, code: 'invalid_name', field: 'name' });
  });

  test('a non-Premium account: 403 premium_required on every private method', async () => {
    const client = clientFor(basic);
    const calls = [
      () => client.getUser(),
      () => client.updateUser({ name: 'B' }),
      () => client.getSettings(),
      () => client.updateSettings({ timezone: 'UTC' }),
      () => client.listTimezones(),
    ];
    for (const call of calls) await expectApiError(call, { status: 403, code: 'premium_required', field: undefined });
  });

  test('a wrong key: 401 invalid_credentials, not retried', async () => {
    const { fetch, exchanges } = recordingFetch();
    const otherKey = (await createAccount(workspace, 'carol')).key;
    const client = new AccountApiClient({ baseUrl: server.url, username: 'alice', apiKey: otherKey, fetch });
    await expectApiError(() => client.getUser(), { status: 401, code: 'invalid_credentials' });
    await expectApiError(() => client.hello(), { status: 401, code: 'invalid_credentials' });
    assert.equal(exchanges.length, 2);
  });

  test('no credentials on a private endpoint: 401 credentials_required', async () => {
    await expectApiError(() => new AccountApiClient({ baseUrl: server.url }).getSettings(), { status: 401, code: 'credentials_required' });
  });

});

describe('envelope() returns the whole success envelope as the server sent it', () => {
  test('for every endpoint, equal to what a direct HTTP call receives', async () => {
    const erin = await createAccount(workspace, 'erin', { name: 'Erin' });
    const client = clientFor(erin);
    const direct = async (method: string, path: string, form?: Record<string, string>) => {
      const answer = await call(method, `${server.api}${path}`, { auth: { username: erin.username, key: erin.key }, ...(form === undefined ? {} : { form }) });
      assert.equal(answer.status, 200, `${method} ${path}: ${answer.text}`);
      return answer.body;
    };
    assert.deepEqual(await new AccountApiClient({ baseUrl: server.url }).envelope('GET /hello'), {
      status: 'success',
      messages: [],
      meta: {},
      data: { name: 'World' },
    });
    assert.deepEqual(await client.envelope('GET /hello'), await direct('GET', '/hello'));
    assert.deepEqual(await client.envelope('POST /hello', { name: 'Ada & co' }), await direct('POST', '/hello', { name: 'Ada & co' }));
    assert.deepEqual(await client.envelope('GET /user'), await direct('GET', '/user'));
    // Each POST is sent twice with the same body, so both answers describe the same state.
    assert.deepEqual(await client.envelope('POST /user', { name: 'Erin B' }), await direct('POST', '/user', { name: 'Erin B' }));
    assert.deepEqual(await client.envelope('GET /settings'), await direct('GET', '/settings'));
    assert.deepEqual(await client.envelope('POST /settings', { timezone: 'Europe/Kyiv' }), await direct('POST', '/settings', { timezone: 'Europe/Kyiv' }));
    assert.deepEqual(await client.envelope('GET /settings/timezones'), await direct('GET', '/settings/timezones'));
  });

  test('failures throw the same AccountApiError as the typed methods', async () => {
    await expectApiError(() => clientFor(alice).envelope('POST /settings', { timezone: 'europe/kyiv' }), { status: 400, code: 'invalid_timezone', field: 'timezone' });
    await expectApiError(() => clientFor(basic).envelope('GET /user'), { status: 403, code: 'premium_required' });
  });

  test('it keeps no ETag cache: the timezone list comes with its body every time', async () => {
    const { fetch, exchanges } = recordingFetch();
    const client = clientFor(alice, { fetch });
    await client.listTimezones();
    const envelope = await client.envelope('GET /settings/timezones');
    assert.ok(envelope.data.length > 300);
    assert.equal(exchanges[1]?.requestHeaders.get('if-none-match'), null, 'envelope() sends no If-None-Match');
    assert.equal(exchanges[1]?.status, 200);
  });
});
