// Who must not send a test event, doesn't: no admin token, an API key, the public port. And the ping is the server sending a
// request on demand, so it meets the same address check as every delivery: a loopback receiver is refused (nothing reaches it)
// unless WEBHOOK_ALLOW_PRIVATE=1. Only 127.0.0.1 is ever a target here.
import assert from 'node:assert/strict';
import { issueAdminToken } from '../../../src/domain/admin-tokens.ts';
import { basic, call } from '../../support/http.ts';
import { cliOk, createAccount, expectCliExit } from '../../support/server-process.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { bearer, expectData, expectFailure, onEveryEngine } from './admin-support.ts';

// The server runs without WEBHOOK_ALLOW_PRIVATE; only the CLI that registers the loopback endpoint is given it.
onEveryEngine('admin webhook test event: security', ({ suite: { test, before, after }, admin }) => {
  let receiver: Receiver;
  let endpointId: string;
  let secret: string;
  before(async () => {
    receiver = await startReceiver();
    const added = JSON.parse(await cliOk(admin().workspace, ['webhooks', 'add', receiver.url, '--json'], { WEBHOOK_ALLOW_PRIVATE: '1' }));
    endpointId = added.endpoint_id;
    secret = added.secret;
    receiver.setSecret(secret);
  });
  after(async () => receiver.stop());

  test('without a token, or with an API key, no test event is sent', async () => {
    const path = `${admin().admin}/webhooks/${endpointId}/test`;
    expectFailure(await call('POST', path), 401, 'admin_token_required');
    expectFailure(await call('POST', path, { auth: bearer(issueAdminToken().token) }), 401, 'invalid_admin_token');
    const alice = await createAccount(admin().workspace, 'alice');
    expectFailure(await call('POST', path, { auth: basic('alice', alice.key) }), 401, 'wrong_credential_kind');
    expectFailure(await call('POST', path, { auth: bearer(alice.key) }), 401, 'wrong_credential_kind');
    assert.equal(receiver.requests, 0, 'a refused caller made the server send something');
  });

  test('the public port has no test path', async () => {
    assert.equal((await call('POST', `${admin().server.api}/webhooks/${endpointId}/test`)).status, 404);
    assert.equal((await call('POST', `${admin().server.api.replace(/\/api\/v0$/, '')}/admin/v0/webhooks/${endpointId}/test`, { auth: bearer(admin().token) })).status, 404);
    assert.equal(receiver.requests, 0);
  });

  test('a loopback receiver is refused by the address check, as a delivery is: 200 with the reason, and nothing reaches it', async () => {
    const outcome = expectData(await admin().call('POST', `/webhooks/${endpointId}/test`));
    assert.equal(outcome.delivered, false);
    assert.equal(outcome.status, null);
    assert.match(outcome.error, /127\.0\.0\.1, which is not a public address .*WEBHOOK_ALLOW_PRIVATE=1/);
    const cli = await expectCliExit(admin().workspace, ['webhooks', 'test', endpointId], 1);
    assert.match(cli.stdout, /did not answer the ping evt_\S+: .*not a public address/);
    assert.equal(receiver.requests, 0, 'the refused address was sent a request');
  });

  test('with WEBHOOK_ALLOW_PRIVATE=1 the same receiver gets the ping, signed with the secret it was given', async () => {
    const text = await cliOk(admin().workspace, ['webhooks', 'test', endpointId, '--json'], { WEBHOOK_ALLOW_PRIVATE: '1' });
    const outcome = JSON.parse(text);
    assert.equal(outcome.delivered, true, text);
    assert.equal(receiver.requests, 1);
    assert.deepEqual(receiver.rejected, []);
    assert.equal(receiver.received[0]!.event.id, outcome.event_id);
    assert.equal(text.includes(secret), false, 'the secret is not printed');
  });

  test('a test event leaves no secret in the audit trail', async () => {
    const audit = expectData(await admin().call('GET', '/audit?limit=100'));
    const tested = audit.filter((entry: any) => entry.action === 'webhook_endpoint.tested');
    assert.ok(tested.length >= 2, `the tests were audited: ${JSON.stringify(audit)}`);
    assert.equal(JSON.stringify(audit).includes(secret), false);
  });
});
