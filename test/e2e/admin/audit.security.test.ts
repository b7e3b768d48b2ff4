// The audit trail is for admin tokens only; a refused request records nothing.
import assert from 'node:assert/strict';
import { basic, call } from '../../support/http.ts';
import { createAccount } from '../../support/server-process.ts';
import { bearer, expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin audit: security', ({ suite: { test }, admin }) => {
  test('without a token, or with an API key, the trail is not shown', async () => {
    expectFailure(await call('GET', `${admin().admin}/audit`), 401, 'admin_token_required');
    const alice = await createAccount(admin().workspace, 'alice');
    expectFailure(await call('GET', `${admin().admin}/audit`, { auth: basic('alice', alice.key) }), 401, 'wrong_credential_kind');
    expectFailure(await call('GET', `${admin().admin}/audit`, { auth: bearer(alice.key) }), 401, 'wrong_credential_kind');
  });

  test('a refused change leaves no entry', async () => {
    const before = expectData(await admin().call('GET', '/audit?limit=100')).length;
    expectFailure(await call('POST', `${admin().admin}/accounts`, { form: { username: 'mallory' } }), 401, 'admin_token_required');
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'bad name' } }), 400, 'invalid_username');
    assert.equal(expectData(await admin().call('GET', '/audit?limit=100')).length, before);
  });
});
