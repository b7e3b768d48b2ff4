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

  test('one endpoint is read with an admin token only, and never with its secret', async () => {
    const added = expectData(await admin().call('POST', '/webhooks', { form: { url: 'https://93.184.215.14/hooks/one' } }), 201);
    const path = `${admin().admin}/webhooks/${added.endpoint_id}`;
    expectFailure(await call('GET', path), 401, 'admin_token_required');
    const bob = await createAccount(admin().workspace, 'bob');
    expectFailure(await call('GET', path, { auth: basic('bob', bob.key) }), 401, 'wrong_credential_kind');
    expectFailure(await call('GET', path, { auth: bearer(bob.key) }), 401, 'wrong_credential_kind');
    const read = await admin().call('GET', `/webhooks/${added.endpoint_id}`);
    assert.equal(read.text.includes(added.secret), false, 'the secret is not in the answer');
    assert.equal('secret' in expectData(read), false);
    expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
  });

  test('the public port has no webhooks paths', async () => {
    const result = await call('GET', `${admin().server.api}/webhooks`);
    assert.equal(result.status, 404);
  });
});
