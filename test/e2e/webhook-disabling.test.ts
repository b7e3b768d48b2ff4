// An endpoint failing for WEBHOOK_DISABLE_AFTER is disabled by serve, and `webhooks list` says why; enabling resumes it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HANG_MS } from '../support/eventually.ts';
import { call } from '../support/http.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

let workspace: Workspace;
let server: ServerProcess;
let receiver: Receiver;

before(async () => {
  workspace = createWorkspace({
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms',
    WEBHOOK_DISABLE_AFTER: '2s',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    LOG_LEVEL: 'warn',
  });
  receiver = await startReceiver();
  receiver.failWith = 500;
  receiver.setSecret(JSON.parse(await cliOk(workspace, ['webhooks', 'add', receiver.url, '--json'])).secret);
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  await receiver.stop();
  workspace.cleanup();
});

test('an endpoint whose every attempt fails for WEBHOOK_DISABLE_AFTER is disabled, says why, and resumes when enabled', async () => {
  const alice = await createAccount(workspace, 'alice');
  // The bound is a hang detector, not a timing check: a loaded machine may take long to get there.
  const deadline = Date.now() + HANG_MS;
  let endpoint: any;
  while (Date.now() < deadline) {
    [endpoint] = JSON.parse(await cliOk(workspace, ['webhooks', 'list', '--json']));
    if (!endpoint.enabled) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(endpoint.enabled, false, 'the endpoint was never disabled');
  assert.match(endpoint.disabled_reason, /^every delivery failed since .*; the last: HTTP 500 at /);
  assert.ok(server.output.some((line) => line.includes('webhook endpoint disabled')), 'serve logs the disabling');
  const requests = receiver.requests;
  assert.equal((await call('POST', `${server.api}/user`, { auth: alice, form: { name: 'While Disabled' } })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(receiver.requests, requests, 'nothing is sent to a disabled endpoint');
  receiver.failWith = null;
  await cliOk(workspace, ['webhooks', 'enable', endpoint.endpoint_id]);
  await receiver.waitFor('the pending deliveries after enabling', (received) => received.some((r) => r.event.type === 'account.created'));
  assert.deepEqual(receiver.rejected, []);
});
