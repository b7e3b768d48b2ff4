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

  test('the filters are read only behind the token: without one, a filtered read is refused before the filter is checked', async () => {
    expectFailure(await call('GET', `${admin().admin}/audit?actor=admin:x&action=key.revoked`), 401, 'admin_token_required');
    expectFailure(await call('GET', `${admin().admin}/audit?action=nonsense`), 401, 'admin_token_required');
  });

  test("a filter's text is matched as data: quotes and SQL in actor match nothing and change nothing", async () => {
    const before = expectData(await admin().call('GET', '/audit?limit=100')).length;
    for (const actor of ["admin:x' OR '1'='1", 'admin:x%', 'cli:%', "key:x');DROP-TABLE-audit_events;--"]) {
      assert.deepEqual(expectData(await admin().call('GET', `/audit?actor=${encodeURIComponent(actor)}`)), [], actor);
    }
    assert.equal(expectData(await admin().call('GET', '/audit?limit=100')).length, before);
  });

  test('a refused change leaves no entry', async () => {
    const before = expectData(await admin().call('GET', '/audit?limit=100')).length;
    expectFailure(await call('POST', `${admin().admin}/accounts`, { form: { username: 'mallory' } }), 401, 'admin_token_required');
    expectFailure(await admin().call('POST', '/accounts', { form: { username: 'bad name' } }), 400, 'invalid_username');
    assert.equal(expectData(await admin().call('GET', '/audit?limit=100')).length, before);
  });
});
