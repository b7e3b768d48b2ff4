// Who must not read a key's usage, doesn't: no token, an API key, a revoked token; nor through another account's name, nor
// on the public port; and a bad key id is refused before the store is asked.
import assert from 'node:assert/strict';
import { basic, call } from '../../support/http.ts';
import { cliOk, createAccount } from '../../support/server-process.ts';
import { bearer, expectData, expectFailure, makeAdminToken, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin key usage: security', ({ suite: { test }, admin }) => {
  test('without a token, with an API key, or with a revoked token, no usage is read', async () => {
    const alice = await createAccount(admin().workspace, 'alice');
    const keyId = alice.key.slice(10, 22);
    const revoked = await makeAdminToken(admin().workspace, 'gone');
    await cliOk(admin().workspace, ['admin-tokens', 'revoke', revoked.slice(11, 23)]);
    const path = `${admin().admin}/accounts/alice/keys/${keyId}/usage`;
    for (const [auth, code] of [
      [undefined, 'admin_token_required'],
      [basic('alice', alice.key), 'wrong_credential_kind'],
      [bearer(alice.key), 'wrong_credential_kind'],
      [bearer(revoked), 'admin_token_revoked'],
    ] as const) {
      const refused = await call('GET', path, auth === undefined ? {} : { auth });
      expectFailure(refused, 401, code);
      assert.ok(!refused.text.includes('"days"'), `a refusal carried usage: ${refused.text}`);
    }
    assert.deepEqual(expectData(await admin().call('GET', `/accounts/alice/keys/${keyId}/usage`)), { days: [], addresses: [] });
  });

  test("a key is read only through its own account's name; a wrong key id is refused", async () => {
    const alice = await createAccount(admin().workspace, 'alice2');
    await createAccount(admin().workspace, 'mallory');
    const keyId = alice.key.slice(10, 22);
    expectFailure(await admin().call('GET', `/accounts/mallory/keys/${keyId}/usage`), 404, 'key_not_found');
    expectFailure(await admin().call('GET', `/accounts/nobody/keys/${keyId}/usage`), 404, 'account_not_found');
    expectFailure(await admin().call('GET', '/accounts/alice2/keys/not-a-key-id/usage'), 400, 'invalid_key_id');
  });

  test('the public port has no usage endpoint', async () => {
    const eve = await createAccount(admin().workspace, 'eve');
    const keyId = eve.key.slice(10, 22);
    const answer = await call('GET', `${admin().server.url}/admin/v0/accounts/eve/keys/${keyId}/usage`, { auth: { username: 'eve', key: eve.key } });
    assert.equal(answer.status, 404, answer.text);
  });
});
