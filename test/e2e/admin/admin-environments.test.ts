// Live and sandbox admin tokens carry markers of their own: a token sent to the other environment's admin API is told so
// (401 wrong_environment) without spending its address's failed-attempt budget; each port still tells the other's credentials.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueAdminToken } from '../../../src/domain/admin-tokens.ts';
import { call, type CallResult } from '../../support/http.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, expectFailure } from './admin-support.ts';

const AUTH_FAILURES = 20;

describe('admin tokens of each environment, on the live and the sandbox admin API', () => {
  let workspace: Workspace;
  let live: ServerProcess;
  let sandbox: ServerProcess;
  let liveToken: string;
  let sandboxToken: string;

  const adminGet = (server: ServerProcess, auth: string, address: string): Promise<CallResult> =>
    call('GET', `${adminUrlOf(server)}/accounts`, { auth, headers: { 'x-forwarded-for': address } });

  before(async () => {
    workspace = createWorkspace({
      ADMIN_PORT: '0',
      RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
      // Long enough that no window ends while a test runs, however slow the machine.
      RATE_LIMIT_WINDOW_MS: '3600000',
      TRUST_PROXY: '127.0.0.1',
    });
    liveToken = (await cliOk(workspace, ['admin-tokens', 'create', '--label', 'billing'])).trim();
    sandboxToken = (await cliOk(workspace, ['admin-tokens', 'create', '--label', 'billing', '--sandbox'])).trim();
    [live, sandbox] = await Promise.all([startServer(workspace), startServer(workspace, ['--sandbox'])]);
  });

  after(async () => {
    await Promise.all([live?.stop(), sandbox?.stop()]);
    workspace?.cleanup();
  });

  test('admin-tokens create --sandbox makes a sandbox token, which the sandbox admin API accepts; list shows its prefix', async () => {
    assert.match(liveToken, /^aapi_admin_[0-9A-Za-z]{50}$/);
    assert.match(sandboxToken, /^aapi_admin_sandbox_[0-9A-Za-z]{50}$/);
    expectData(await adminGet(sandbox, bearer(sandboxToken), '198.51.100.10'));
    expectData(await adminGet(live, bearer(liveToken), '198.51.100.10'));
    const listed = JSON.parse(await cliOk(workspace, ['admin-tokens', 'list', '--sandbox', '--json'])) as { token_id: string; prefix: string }[];
    const tokenId = sandboxToken.slice('aapi_admin_sandbox_'.length, 'aapi_admin_sandbox_'.length + 12);
    assert.deepEqual(
      listed.map((token) => [token.token_id, token.prefix]),
      [[tokenId, `aapi_admin_sandbox_${tokenId}`]],
    );
    assert.match(await cliOk(workspace, ['admin-tokens', 'revoke', tokenId, '--sandbox']), /Revoked admin token/);
    expectFailure(await adminGet(sandbox, bearer(sandboxToken), '198.51.100.10'), 401, 'admin_token_revoked');
    sandboxToken = (await cliOk(workspace, ['admin-tokens', 'create', '--label', 'billing again', '--sandbox'])).trim();
  });

  test('the live admin API tells a sandbox token where it belongs, as often as it is sent, without spending the budget', async () => {
    const address = '198.51.100.11';
    for (let i = 0; i < AUTH_FAILURES + 5; i++) {
      const told = expectFailure(await adminGet(live, bearer(issueAdminToken('sandbox').token), address), 401, 'wrong_environment');
      assert.match(told.message, /sandbox admin token/);
    }
    const real = await adminGet(live, bearer(sandboxToken), address);
    expectFailure(real, 401, 'wrong_environment');
    assert.match(real.headers.get('www-authenticate') ?? '', /^Bearer /);
    // The address's whole budget is left: 20 wrong live tokens are each told 401, the 21st is the first 429.
    for (let i = 0; i < AUTH_FAILURES; i++) expectFailure(await adminGet(live, bearer(issueAdminToken('live').token), address), 401, 'invalid_admin_token');
    expectFailure(await adminGet(live, bearer(issueAdminToken('live').token), address), 429, 'too_many_failed_attempts');
  });

  test('the sandbox admin API tells a live token where it belongs, as often as it is sent, without spending the budget', async () => {
    const address = '198.51.100.12';
    for (let i = 0; i < AUTH_FAILURES + 5; i++) {
      const told = expectFailure(await adminGet(sandbox, bearer(liveToken), address), 401, 'wrong_environment');
      assert.match(told.message, /admin-tokens create --sandbox/);
    }
    for (let i = 0; i < AUTH_FAILURES; i++) {
      expectFailure(await adminGet(sandbox, bearer(issueAdminToken('sandbox').token), address), 401, 'invalid_admin_token');
    }
    expectFailure(await adminGet(sandbox, bearer(issueAdminToken('sandbox').token), address), 429, 'too_many_failed_attempts');
    // And its own token is served all the same.
    expectData(await adminGet(sandbox, bearer(sandboxToken), address));
  });

  test('a sandbox admin token on either public port is the wrong kind of credential, and a sandbox key on the sandbox admin port too', async () => {
    for (const server of [live, sandbox]) {
      expectFailure(await call('GET', `${server.api}/user`, { auth: bearer(sandboxToken) }), 401, 'wrong_credential_kind');
      expectFailure(await call('GET', `${server.api}/user`, { auth: { username: 'alice', key: sandboxToken } }), 401, 'wrong_credential_kind');
    }
    const key = (await createAccount(workspace, 'sandboxer', { sandbox: true })).key;
    expectFailure(await adminGet(sandbox, bearer(key), '198.51.100.13'), 401, 'wrong_credential_kind');
    expectFailure(await call('GET', `${adminUrlOf(sandbox)}/accounts`, { auth: { username: 'sandboxer', key } }), 401, 'wrong_credential_kind');
  });
});
