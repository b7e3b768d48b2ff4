// `account-api admin-tokens create|list|revoke` over real processes, on each engine: shown once, a hash stored, last use listed.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { cliJsonError, cliOk, expectCliExit, runCli } from '../../support/server-process.ts';
import { bearer, expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('account-api admin-tokens', ({ suite: { test }, admin }) => {
  test('create prints the token alone on stdout, in its own format, with the advice on stderr', async () => {
    const result = await runCli(admin().workspace, ['admin-tokens', 'create', '--label', 'billing']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^aapi_admin_[0-9A-Za-z]{50}\n$/);
    assert.match(result.stderr, /store it now, it cannot be shown again/);
  });

  test('create --json gives the record and the token; list never shows the token again', async () => {
    const created = JSON.parse(await cliOk(admin().workspace, ['admin-tokens', 'create', '--label', 'support', '--json']));
    assert.equal(created.label, 'support');
    assert.equal(created.created_by, `cli:${userInfo().username}`);
    assert.equal(created.token.slice(11, 23), created.token_id);
    const listed = await cliOk(admin().workspace, ['admin-tokens', 'list', '--json']);
    assert.ok(!listed.includes(created.token), 'list shows a token');
    assert.ok(JSON.parse(listed).some((token: { token_id: string }) => token.token_id === created.token_id));
  });

  test('list shows when a token was last used', async () => {
    const tokenId = admin().token.slice(11, 23);
    expectData(await admin().call('GET', '/accounts'));
    let lastUsed: string | null = null;
    for (let i = 0; i < 50 && lastUsed === null; i++) {
      const tokens = JSON.parse(await cliOk(admin().workspace, ['admin-tokens', 'list', '--json'])) as { token_id: string; last_used_at: string | null }[];
      lastUsed = tokens.find((token) => token.token_id === tokenId)?.last_used_at ?? null;
      if (lastUsed === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(lastUsed !== null, 'the use was not recorded');
    const table = await cliOk(admin().workspace, ['admin-tokens', 'list']);
    assert.match(table, /^TOKEN_ID\s+PREFIX\s+LABEL\s+CREATED_BY\s+CREATED\s+LAST_USED\s+REVOKED/);
  });

  test('revoke stops the token at once; revoking an unknown or malformed id is refused', async () => {
    const token = (await cliOk(admin().workspace, ['admin-tokens', 'create', '--label', 'temp'])).trim();
    expectData(await admin().call('GET', '/accounts', { auth: bearer(token) }));
    assert.match(await cliOk(admin().workspace, ['admin-tokens', 'revoke', token.slice(11, 23)]), /Revoked admin token/);
    expectFailure(await admin().call('GET', '/accounts', { auth: bearer(token) }), 401, 'admin_token_revoked');
    assert.equal(cliJsonError(await expectCliExit(admin().workspace, ['admin-tokens', 'revoke', '000000000000', '--json'], 1)).code, 'admin_token_not_found');
    assert.equal(cliJsonError(await expectCliExit(admin().workspace, ['admin-tokens', 'revoke', 'nope', '--json'], 2)).code, 'invalid_token_id');
  });

  test('create needs a label, and a label that is blank or too long is a wrong command line too (exit 2)', async () => {
    await expectCliExit(admin().workspace, ['admin-tokens', 'create'], 2);
    assert.equal(cliJsonError(await expectCliExit(admin().workspace, ['admin-tokens', 'create', '--label', ' ', '--json'], 2)).code, 'invalid_label');
    assert.equal(cliJsonError(await expectCliExit(admin().workspace, ['admin-tokens', 'create', '--label', 'x'.repeat(101), '--json'], 2)).code, 'invalid_label');
  });
});
