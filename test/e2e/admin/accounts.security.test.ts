// Who must not get into the admin API's accounts, doesn't: no token, an API key, a wrong, malformed or revoked token.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { composeAdminToken, issueAdminToken } from '../../../src/domain/admin-tokens.ts';
import { randomIdAndSecret } from '../../../src/domain/api-keys.ts';
import { basic, call } from '../../support/http.ts';
import { cliOk, createAccount } from '../../support/server-process.ts';
import { bearer, expectData, expectFailure, makeAdminToken, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin accounts: security', ({ suite: { test }, admin }) => {
  const every = [
    ['POST', '/accounts'],
    ['GET', '/accounts'],
    ['GET', '/accounts/alice'],
    ['PATCH', '/accounts/alice'],
    ['DELETE', '/accounts/alice'],
  ] as const;

  test('without Authorization every operation is 401 admin_token_required with a Bearer challenge, and changes nothing', async () => {
    for (const [method, path] of every) {
      const result = await call(method, `${admin().admin}${path}`, method === 'GET' || method === 'DELETE' ? {} : { form: { username: 'mallory', premium: 'true' } });
      expectFailure(result, 401, 'admin_token_required');
      assert.match(result.headers.get('www-authenticate') ?? '', /^Bearer realm="account-api admin"/);
    }
    expectFailure(await admin().call('GET', '/accounts/mallory'), 404, 'account_not_found');
  });

  test('an API key, as Basic or as a Bearer token, is 401 wrong_credential_kind saying the port takes admin tokens', async () => {
    const alice = await createAccount(admin().workspace, 'alice');
    for (const auth of [basic(alice.username, alice.key), bearer(alice.key)]) {
      const message = expectFailure(await admin().call('GET', '/accounts', { auth }), 401, 'wrong_credential_kind');
      assert.match(message.message, /Bearer <admin token>/);
    }
  });

  test('a malformed token is 401 malformed_admin_token; a well-formed unknown one is 401 invalid_admin_token', async () => {
    expectFailure(await admin().call('GET', '/accounts', { auth: 'Bearer aapi_admin_short' }), 401, 'malformed_admin_token');
    expectFailure(await admin().call('GET', '/accounts', { auth: 'Token abc' }), 401, 'malformed_admin_token');
    // Well formed, checksum right: an unknown id, and the real id with another secret.
    expectFailure(await admin().call('GET', '/accounts', { auth: bearer(issueAdminToken().token) }), 401, 'invalid_admin_token');
    const sameId = composeAdminToken(admin().token.slice(11, 23), randomIdAndSecret().secret).token;
    expectFailure(await admin().call('GET', '/accounts', { auth: bearer(sameId) }), 401, 'invalid_admin_token');
  });

  test('a revoked token is refused from the next request: 401 admin_token_revoked', async () => {
    const token = await makeAdminToken(admin().workspace, 'short-lived');
    expectData(await admin().call('GET', '/accounts', { auth: bearer(token) }));
    await cliOk(admin().workspace, ['admin-tokens', 'revoke', token.slice(11, 23)]);
    expectFailure(await admin().call('GET', '/accounts', { auth: bearer(token) }), 401, 'admin_token_revoked');
  });

  test('Authorization sent twice is 400 duplicate_header: which one a proxy used is anyone\'s guess', async () => {
    const { port } = new URL(admin().admin);
    const auth = bearer(admin().token);
    const raw = await new Promise<string>((done, fail) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(`GET /admin/v0/accounts HTTP/1.1\r\nHost: localhost\r\nauthorization: ${auth}\r\nAuthorization: ${auth}\r\nConnection: close\r\n\r\n`),
      );
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('error', fail).on('close', () => done(text));
    });
    assert.match(raw, /^HTTP\/1.1 400 /);
    assert.match(raw, /"code":"duplicate_header"/);
  });

  test('the admin API is not on the public port: 404 there, with or without an admin token', async () => {
    const result = await call('GET', `${admin().server.url}/admin/v0/accounts`, { auth: bearer(admin().token) });
    assert.equal(result.status, 404, result.text);
  });

  test('an admin token on the public API is 401 wrong_credential_kind saying it takes HTTP Basic', async () => {
    for (const auth of [bearer(admin().token), basic('alice', admin().token)]) {
      const message = expectFailure(await call('GET', `${admin().server.api}/user`, { auth }), 401, 'wrong_credential_kind');
      assert.match(message.message, /HTTP Basic/);
    }
  });

  test('a search by username prefix is behind the token too, and no text of it matches every account', async () => {
    expectFailure(await call('GET', `${admin().admin}/accounts?username_prefix=a`), 401, 'admin_token_required');
    await createAccount(admin().workspace, 'victor');
    // LIKE's wildcards are refused, not passed on; '_' and '.' are username characters and match only themselves.
    for (const prefix of ['%', '_', '.', '-']) {
      const result = await admin().call('GET', `/accounts?username_prefix=${encodeURIComponent(prefix)}`);
      if (result.status === 200) assert.ok(!JSON.stringify(result.body).includes('victor'), `${prefix} matched victor`);
      else expectFailure(result, 400, 'invalid_username_prefix');
    }
  });
});
