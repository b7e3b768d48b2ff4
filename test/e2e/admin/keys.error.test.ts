// Bad input to the admin API's keys gets the right failure and issues nothing.
import assert from 'node:assert/strict';
import { expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin keys: errors', ({ suite: { test, before }, admin }) => {
  before(async () => {
    expectData(await admin().call('POST', '/accounts', { form: { username: 'alice' } }), 201);
  });

  test('a scope other than read or write is 400 invalid_scope; a bad or past expiry is 400 invalid_expiry', async () => {
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { scope: 'admin' } }), 400, 'invalid_scope');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { expires_at: 'tomorrow' } }), 400, 'invalid_expiry');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { expires_at: '2001-01-01T00:00:00Z' } }), 400, 'invalid_expiry');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { label: 'x'.repeat(101) } }), 400, 'invalid_label');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { owner: 'bob' } }), 400, 'unknown_parameter');
    assert.deepEqual(expectData(await admin().call('GET', '/accounts/alice/keys')), [], 'a refused request issued a key');
  });

  test('keys of an unknown account are 404 account_not_found', async () => {
    expectFailure(await admin().call('POST', '/accounts/nobody/keys', {}), 404, 'account_not_found');
    expectFailure(await admin().call('GET', '/accounts/nobody/keys'), 404, 'account_not_found');
  });

  test('a key id of the wrong shape is 400 invalid_key_id; an unknown one is 404 key_not_found', async () => {
    expectFailure(await admin().call('DELETE', '/keys/short'), 400, 'invalid_key_id');
    expectFailure(await admin().call('POST', '/keys/short/roll'), 400, 'invalid_key_id');
    expectFailure(await admin().call('DELETE', '/keys/000000000000'), 404, 'key_not_found');
    expectFailure(await admin().call('POST', '/keys/000000000000/roll'), 404, 'key_not_found');
  });

  test('rolling a revoked key is 409 key_inactive; a bad overlap is 400 invalid_duration', async () => {
    const issued = expectData(await admin().call('POST', '/accounts/alice/keys', {}), 201);
    expectFailure(await admin().call('POST', `/keys/${issued.key_id}/roll`, { form: { overlap: 'soon' } }), 400, 'invalid_duration');
    expectData(await admin().call('DELETE', `/keys/${issued.key_id}`));
    expectFailure(await admin().call('POST', `/keys/${issued.key_id}/roll`), 409, 'key_inactive');
  });
});
