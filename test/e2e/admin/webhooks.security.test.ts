// Webhooks are for admin tokens only: without one, or with an API key, nothing is registered or shown.
import assert from 'node:assert/strict';
import { basic, call } from '../../support/http.ts';
import { createAccount } from '../../support/server-process.ts';
import { bearer, expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin webhooks: security', ({ suite: { test }, admin }) => {
  test('without a token, or with an API key, no endpoint is registered, listed or changed', async () => {
    const form = { url: 'https://example.com/hooks' };
    expectFailure(await call('POST', `${admin().admin}/webhooks`, { form }), 401, 'admin_token_required');
    expectFailure(await call('GET', `${admin().admin}/webhooks`), 401, 'admin_token_required');
    const alice = await createAccount(admin().workspace, 'alice');
    expectFailure(await call('POST', `${admin().admin}/webhooks`, { form, auth: basic('alice', alice.key) }), 401, 'wrong_credential_kind');
    expectFailure(await call('GET', `${admin().admin}/webhooks`, { auth: bearer(alice.key) }), 401, 'wrong_credential_kind');
    assert.deepEqual(expectData(await admin().call('GET', '/webhooks')), []);
  });

  test('the public port has no webhooks paths', async () => {
    const result = await call('GET', `${admin().server.api}/webhooks`);
    assert.equal(result.status, 404);
  });
});
