// Bad input to the admin API's accounts gets the right failure, in the envelope, and changes nothing.
import assert from 'node:assert/strict';
import { expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin accounts: errors', ({ suite: { test, before }, admin }) => {
  before(async () => {
    expectData(await admin().call('POST', '/accounts', { form: { username: 'alice' } }), 201);
  });

  test('POST /accounts without a username is 400 missing_parameter', async () => {
    assert.equal(expectFailure(await admin().call('POST', '/accounts', { form: { name: 'x' } }), 400, 'missing_parameter').field, 'username');
  });

  test('a username, name or timezone that breaks its rule gets its own code', async () => {
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'no spaces' } }), 400, 'invalid_username');
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'ok', name: '' } }), 400, 'invalid_name');
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'ok', timezone: 'Mars/Olympus' } }), 400, 'invalid_timezone');
    assert.equal((await admin().call('GET', '/accounts/ok')).status, 404, 'a refused create made the account');
  });

  test('premium must be true or false; an unknown parameter is named', async () => {
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'ok', premium: 'yes' } }), 400, 'invalid_parameter');
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'ok', admin: 'true' } }), 400, 'unknown_parameter');
  });

  test('a NUL byte in the address or a filter is answered as the caller\'s mistake, never a 500', async () => {
    // PostgreSQL cannot hold the byte (400 invalid_parameter); SQLite looks it up and finds nothing (404, or an empty list).
    for (const path of ['/accounts/%00', '/accounts/a%00b/keys', '/audit?username=%00', '/webhooks/we_%00/deliveries']) {
      const answer = await admin().call('GET', path);
      const nothing = answer.status === 200 && Array.isArray(answer.body?.data) && answer.body.data.length === 0;
      assert.ok([400, 404].includes(answer.status) || nothing, `${path} answered ${answer.status}: ${answer.text}`);
      if (answer.status === 400) assert.equal(answer.body.messages[0].code, 'invalid_parameter', answer.text);
    }
  });

  test('a username taken (ignoring case) is 409 username_taken', async () => {
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'ALICE' } }), 409, 'username_taken');
  });

  test('an unknown account is 404 account_not_found to GET, PATCH and DELETE', async () => {
    expectFailure(await admin().call('GET', '/accounts/nobody'), 404, 'account_not_found');
    expectFailure(await admin().call('PATCH', '/accounts/nobody', { form: { premium: 'true' } }), 404, 'account_not_found');
    expectFailure(await admin().call('DELETE', '/accounts/nobody'), 404, 'account_not_found');
  });

  test('PATCH with nothing to change is 400 missing_parameter; a bad timezone changes nothing, premium included', async () => {
    expectFailure(await admin().call('PATCH', '/accounts/alice', { form: {} }), 400, 'missing_parameter');
    expectFailure(await admin().call('PATCH', '/accounts/alice', { form: { premium: 'true', timezone: 'Nowhere' } }), 400, 'invalid_timezone');
    assert.equal(expectData(await admin().call('GET', '/accounts/alice')).premium, false);
  });

  test('limit outside 1..100 is 400 invalid_limit; a cursor not given out is 400 invalid_cursor', async () => {
    for (const limit of ['0', '101', 'ten', '-1']) expectFailure(await admin().call('GET', `/accounts?limit=${limit}`), 400, 'invalid_limit');
    for (const cursor of ['garbage!', 'Zm9v', Buffer.from('e1').toString('base64url')]) {
      expectFailure(await admin().call('GET', `/accounts?cursor=${cursor}`), 400, 'invalid_cursor');
    }
    expectFailure(await admin().call('GET', '/accounts?page=2'), 400, 'unknown_parameter');
  });

  test('a username_prefix outside the username alphabet or 1..64 characters is 400 invalid_username_prefix, wildcards included', async () => {
    for (const prefix of ['', 'a b', '%', 'ali%', 'a*', 'é', 'x'.repeat(65), "a'"]) {
      const failure = expectFailure(await admin().call('GET', `/accounts?username_prefix=${encodeURIComponent(prefix)}`), 400, 'invalid_username_prefix');
      assert.equal(failure.field, 'username_prefix');
    }
    assert.deepEqual(expectData(await admin().call('GET', `/accounts?username_prefix=${'x'.repeat(64)}`)), [], '64 characters are allowed');
  });

  test('the same limits on bodies as the public port: too large is 413, neither form nor JSON is 415, bad JSON is 400', async () => {
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'big', name: 'x'.repeat(20_000) } }), 413, 'body_too_large');
    expectFailure(await admin().call('POST', '/accounts', { body: 'username=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectFailure(await admin().call('POST', '/accounts', { body: '{"username":', headers: { 'content-type': 'application/json' } }), 400, 'malformed_body');
  });

  test('a wrong method is 405 with Allow; an unknown path is 404 not_found', async () => {
    const wrong = await admin().call('PUT', '/accounts/alice', { form: { name: 'x' } });
    expectFailure(wrong, 405, 'method_not_allowed');
    assert.match(wrong.headers.get('allow') ?? '', /PATCH/);
    expectFailure(await admin().call('GET', '/nothing-here'), 404, 'not_found');
  });
});
