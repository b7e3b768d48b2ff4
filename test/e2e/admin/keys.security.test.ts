// Who must not issue, list, roll or revoke keys through the admin API, doesn't.
import assert from 'node:assert/strict';
import { basic, call } from '../../support/http.ts';
import { cliOk, createAccount } from '../../support/server-process.ts';
import { bearer, expectData, expectFailure, makeAdminToken, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin keys: security', ({ suite: { test }, admin }) => {
  test('without a token, with an API key, or with a revoked token, no key operation runs', async () => {
    const alice = await createAccount(admin().workspace, 'alice');
    const keyId = alice.key.slice(10, 22);
    const revoked = await makeAdminToken(admin().workspace, 'gone');
    await cliOk(admin().workspace, ['admin-tokens', 'revoke', revoked.slice(11, 23)]);
    const operations = [
      ['POST', '/accounts/alice/keys'],
      ['GET', '/accounts/alice/keys'],
      ['POST', `/keys/${keyId}/roll`],
      ['DELETE', `/keys/${keyId}`],
    ] as const;
    const refusals = [
      [undefined, 'admin_token_required'],
      [basic('alice', alice.key), 'wrong_credential_kind'],
      [bearer(revoked), 'admin_token_revoked'],
    ] as const;
    for (const [method, path] of operations) {
      for (const [auth, code] of refusals) {
        expectFailure(await call(method, `${admin().admin}${path}`, auth === undefined ? {} : { auth }), 401, code);
      }
    }
    const keys = expectData(await admin().call('GET', '/accounts/alice/keys'));
    assert.equal(keys.length, 1, 'a refused request issued or rolled a key');
    assert.equal(keys[0].revoked_at, null, 'a refused request revoked the key');
  });

  test('an API key cannot issue keys for its own account through the admin port either', async () => {
    const bob = await createAccount(admin().workspace, 'bob');
    expectFailure(await call('POST', `${admin().admin}/accounts/bob/keys`, { auth: bearer(bob.key) }), 401, 'wrong_credential_kind');
  });
});
