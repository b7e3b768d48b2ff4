// Protects the timezone list (content, order, ETag revalidation) and POST /settings validation with suggestions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { basic, call, failureMessage, rawGet, type CallOptions, type CallResult } from '../support/http.ts';
import { createAccount, createWorkspace, REPO_ROOT, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const ZONES: readonly string[] = JSON.parse(readFileSync(join(REPO_ROOT, 'src/domain/timezones.json'), 'utf8')).zones;

let workspace: Workspace;
let server: ServerProcess;
let lister: Account;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
  lister = await createAccount(workspace, 'lister');
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function timezones(headers: Record<string, string> = {}): Promise<CallResult> {
  return call('GET', `${server.api}/settings/timezones`, { auth: lister, headers });
}

async function currentEtag(): Promise<string> {
  const result = await timezones();
  const etag = result.headers.get('etag');
  assert.ok(etag !== null && etag !== '', `GET /settings/timezones sent no ETag: ${[...result.headers].join('; ')}`);
  return etag;
}

function postSettings(account: Account, options: CallOptions): Promise<CallResult> {
  return call('POST', `${server.api}/settings`, { auth: account, ...options });
}

function assertInvalid(result: CallResult, code: string, field: string, what: string): { message: string } {
  assert.equal(result.status, 400, `${what}: expected 400, got ${result.status}: ${result.text}`);
  const message = failureMessage(result);
  assert.equal(message.code, code, `${what}: expected code ${code}: ${result.text}`);
  assert.equal(message.field, field, `${what}: expected field ${field}: ${result.text}`);
  return message;
}

test('GET /settings/timezones returns exactly the zones of the shipped data file', async () => {
  const result = await timezones();
  assert.equal(result.status, 200, `expected 200, got ${result.status}: ${result.text}`);
  assert.deepEqual(result.body?.data, ZONES, 'the served list differs from src/domain/timezones.json');
  assert.deepEqual(result.body?.meta, { description: 'Data is a list of valid timezones.' }, 'meta is not {description}');
});

test('the timezone list is in code-point order without duplicates, UTC last', async () => {
  const zones: string[] = (await timezones()).body.data;
  assert.ok(zones.length > 300, `the list is suspiciously short: ${zones.length} entries`);
  for (let i = 1; i < zones.length; i++) {
    assert.ok(zones[i - 1]! < zones[i]!, `not strictly ascending in code-point order at ${i}: ${zones[i - 1]} then ${zones[i]}`);
  }
  assert.equal(zones.at(-1), 'UTC', 'UTC is not the last entry');
  assert.equal(zones.filter((zone) => !zone.includes('/')).join(), 'UTC', 'UTC should be the only entry without an area');
});

test('the timezone list holds nested names and only the spec areas', async () => {
  const zones: string[] = (await timezones()).body.data;
  for (const zone of ['America/Argentina/Buenos_Aires', 'Europe/Kyiv', 'Europe/Paris', 'Asia/Tokyo', 'UTC']) {
    assert.ok(zones.includes(zone), `${zone} is missing from the list`);
  }
  const areas = new Set(zones.filter((zone) => zone !== 'UTC').map((zone) => zone.slice(0, zone.indexOf('/'))));
  assert.deepEqual(
    [...areas].sort(),
    ['Africa', 'America', 'Antarctica', 'Arctic', 'Asia', 'Atlantic', 'Australia', 'Europe', 'Indian', 'Pacific'],
    'the areas differ from the spec',
  );
});

test('GET /settings/timezones carries an ETag and Cache-Control: private, no-cache', async () => {
  const result = await timezones();
  assert.match(result.headers.get('etag') ?? '', /^(W\/)?"[^"]+"$/, `the ETag is not a quoted entity tag: ${result.headers.get('etag')}`);
  assert.equal(result.headers.get('cache-control'), 'private, no-cache', 'wrong Cache-Control');
});

test('If-None-Match with the current ETag answers 304 with an empty body and the ETag', async () => {
  const etag = await currentEtag();
  const result = await timezones({ 'if-none-match': etag });
  assert.equal(result.status, 304, `expected 304, got ${result.status}`);
  assert.equal(result.text, '', `a 304 must have no body, got: ${result.text}`);
  assert.equal(result.headers.get('etag'), etag, 'the 304 does not repeat the ETag');
});

test('If-None-Match matches a weak W/ form, a list containing the tag, and *', async () => {
  const etag = await currentEtag();
  const strong = etag.replace(/^W\//, '');
  const variants: readonly [string, string][] = [
    ['the weak form', `W/${strong}`],
    ['a list containing it', `"something-else", ${etag}, "another"`],
    ['a list containing its weak form', `"something-else",W/${strong}`],
    ['*', '*'],
  ];
  for (const [what, header] of variants) {
    const result = await timezones({ 'if-none-match': header });
    assert.equal(result.status, 304, `If-None-Match with ${what} (${header}): expected 304, got ${result.status}`);
    assert.equal(result.text, '', `If-None-Match with ${what}: a 304 must have no body`);
  }
});

test('If-None-Match with a different tag answers 200 with the full list', async () => {
  const result = await timezones({ 'if-none-match': '"not-the-current-tag"' });
  assert.equal(result.status, 200, `expected 200, got ${result.status}`);
  assert.deepEqual(result.body?.data, ZONES, 'the full list was not sent');
});

test('POST /settings accepts exact names from the list', async () => {
  const account = await createAccount(workspace, 'exact');
  for (const timezone of ['America/Argentina/Buenos_Aires', 'Europe/Kyiv', 'Asia/Kolkata', 'Pacific/Chatham', 'UTC']) {
    const result = await postSettings(account, { form: { timezone } });
    assert.equal(result.status, 200, `${timezone}: expected 200, got ${result.status}: ${result.text}`);
    assert.deepEqual(result.body, { status: 'success', messages: [], meta: {}, data: { timezone } }, `${timezone}: wrong answer`);
  }
});

test('POST /settings with europe/kyiv answers 400 invalid_timezone suggesting Europe/Kyiv', async () => {
  const account = await createAccount(workspace, 'kyiv');
  const message = assertInvalid(await postSettings(account, { form: { timezone: 'europe/kyiv' } }), 'invalid_timezone', 'timezone', 'europe/kyiv');
  assert.ok(message.message.includes('Europe/Kyiv'), `the message does not suggest Europe/Kyiv: ${message.message}`);
});

test('POST /settings with an old name suggests the zone of the same place: Iceland -> Atlantic/Reykjavik', async () => {
  const account = await createAccount(workspace, 'oldnames');
  const places: readonly (readonly [string, string])[] = [
    ['Iceland', 'Atlantic/Reykjavik'],
    ['Pacific/Truk', 'Pacific/Chuuk'],
    ['Europe/Kiev', 'Europe/Kyiv'],
  ];
  for (const [old, place] of places) {
    const message = assertInvalid(await postSettings(account, { form: { timezone: old } }), 'invalid_timezone', 'timezone', old);
    assert.match(message.message, new RegExp(`Did you mean ${place}\\?$`), `${old} should suggest only ${place}: ${message.message}`);
  }
});

test('POST /settings with a bare city Paris suggests Europe/Paris', async () => {
  const account = await createAccount(workspace, 'paris');
  const message = assertInvalid(await postSettings(account, { form: { timezone: 'Paris' } }), 'invalid_timezone', 'timezone', 'Paris');
  assert.ok(message.message.includes('Europe/Paris'), `the message does not suggest Europe/Paris: ${message.message}`);
});

test('POST /settings with garbage answers 400 invalid_timezone and the server keeps serving', async () => {
  const account = await createAccount(workspace, 'garbage');
  const garbage = ['', ' ', '/', '../../etc/passwd', "'; DROP TABLE accounts; --", '%s%n', '日本/東京', '💥', 'Europe/', '/Paris', 'UTC '];
  for (const timezone of garbage) {
    assertInvalid(await postSettings(account, { form: { timezone } }), 'invalid_timezone', 'timezone', `timezone ${JSON.stringify(timezone)}`);
  }
  const alive = await call('GET', `${server.api}/settings`, { auth: account });
  assert.equal(alive.status, 200, `the server stopped serving after garbage timezones: ${alive.text}`);
});

test('POST /settings with a 1,000-character value answers 400 invalid_timezone without echoing it whole', async () => {
  const account = await createAccount(workspace, 'huge');
  // 1,000 characters is MAX_PARAMETER_LENGTH's default: the longest value that reaches the timezone rule at all.
  const timezone = 'Europe/'.padEnd(1000, 'x');
  const message = assertInvalid(await postSettings(account, { form: { timezone } }), 'invalid_timezone', 'timezone', 'a 1,000-character value');
  assert.ok(message.message.length < 1000, `the message repeats the huge value (${message.message.length} characters)`);
  assertInvalid(await postSettings(account, { form: { timezone: `${timezone}x` } }), 'parameter_too_long', 'timezone', 'a 1,001-character value');
});

test('POST /settings without timezone answers 400 missing_parameter', async () => {
  const account = await createAccount(workspace, 'missing');
  assertInvalid(await postSettings(account, { form: '' }), 'missing_parameter', 'timezone', 'an empty form');
  assertInvalid(await postSettings(account, { json: {} }), 'missing_parameter', 'timezone', 'an empty JSON object');
});

test('POST /settings with timezone given twice answers 400 duplicate_parameter', async () => {
  const account = await createAccount(workspace, 'twice');
  assertInvalid(
    await postSettings(account, { form: 'timezone=UTC&timezone=Europe%2FParis' }),
    'duplicate_parameter',
    'timezone',
    'timezone given twice',
  );
});

test('POST /settings with an extra parameter answers 400 unknown_parameter naming it', async () => {
  const account = await createAccount(workspace, 'extra');
  assertInvalid(await postSettings(account, { form: 'timezone=UTC&colour=blue' }), 'unknown_parameter', 'colour', 'an extra form parameter');
  assertInvalid(await postSettings(account, { json: { timezone: 'UTC', colour: 'blue' } }), 'unknown_parameter', 'colour', 'an extra JSON member');
});

test('a failed POST /settings leaves the stored timezone unchanged', async () => {
  const account = await createAccount(workspace, 'steady', { timezone: 'Asia/Tokyo' });
  const failures: readonly CallOptions[] = [
    { form: { timezone: 'europe/kyiv' } },
    { form: 'timezone=UTC&timezone=Europe%2FParis' },
    { form: 'timezone=UTC&colour=blue' },
    { json: { timezone: 42 } },
  ];
  for (const options of failures) {
    const result = await postSettings(account, options);
    assert.equal(result.status, 400, `expected 400 for ${JSON.stringify(options)}, got ${result.status}: ${result.text}`);
  }
  const settings = await call('GET', `${server.api}/settings`, { auth: account });
  assert.deepEqual(settings.body?.data, { timezone: 'Asia/Tokyo' }, `GET /settings shows a changed timezone: ${settings.text}`);
  const user = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(user.body?.data?.timezone, 'Asia/Tokyo', `GET /user shows a changed timezone: ${user.text}`);
});

test('the timezone list is sent gzip or brotli when asked, with Vary and a validator per coding; 304 for any of them', async () => {
  const account = await createAccount(workspace, 'compressed');
  const auth = basic(account.username, account.key);
  const url = `${server.api}/settings/timezones`;
  const plain = await rawGet(url, { authorization: auth });
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers.vary, 'Accept-Encoding');
  const tags = new Set([plain.headers.etag]);
  for (const [coding, undo] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
    const answer = await rawGet(url, { authorization: auth, 'accept-encoding': coding });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-encoding'], coding);
    assert.equal(answer.headers.vary, 'Accept-Encoding');
    assert.ok(answer.body.length < plain.body.length / 2, `${coding}: ${answer.body.length} bytes for ${plain.body.length}`);
    assert.deepEqual(undo(answer.body), plain.body, `${coding}: the body does not decompress to the list`);
    tags.add(answer.headers.etag);
    const revalidated = await rawGet(url, { authorization: auth, 'accept-encoding': coding, 'if-none-match': plain.headers.etag! });
    assert.equal(revalidated.status, 304, `${coding}: the plain ETag did not revalidate the same list`);
  }
  assert.equal(tags.size, 3, 'codings share an ETag');
  const tiny = await rawGet(`${server.api}/settings`, { authorization: auth, 'accept-encoding': 'gzip, br' });
  assert.equal(tiny.headers['content-encoding'], undefined, 'a small answer was compressed');
});
