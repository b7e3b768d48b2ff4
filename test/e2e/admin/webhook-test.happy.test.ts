// POST /admin/v0/webhooks/{id}/test and `account-api webhooks test`: a real receiver gets a ping signed with the endpoint's secret
// (verified by the standardwebhooks package, not our code), and the answer carries its status; nothing is queued or counted.
import assert from 'node:assert/strict';
import { AdminClient } from '../../../client/src/index.ts';
import { cliOk } from '../../support/server-process.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { expectData, onEveryEngine } from './admin-support.ts';

onEveryEngine(
  'admin webhook test event: happy',
  ({ suite: { test, before, after }, admin }) => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(async () => receiver.stop());

    test('a ping signed as every event reaches the receiver at once; the answer carries its status; it is audited, not queued', async () => {
      // Subscribed to one type only: the ping goes whatever the endpoint takes.
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url, events: 'key.revoked' } }), 201);
      receiver.setSecret(added.secret);
      const before = receiver.requests;
      const outcome = expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/test`));
      assert.equal(outcome.delivered, true, `not delivered: ${JSON.stringify(outcome)}`);
      assert.equal(outcome.status, 204);
      assert.equal(outcome.error, null);
      assert.equal(outcome.endpoint_id, added.endpoint_id);
      assert.equal(outcome.url, receiver.url);
      assert.equal(typeof outcome.latency_ms, 'number');
      assert.equal(receiver.requests - before, 1, 'exactly one request reached the receiver');
      assert.deepEqual(receiver.rejected, [], 'standardwebhooks refused the signature');
      const ping = receiver.received.at(-1)!;
      assert.equal(ping.webhookId, outcome.event_id);
      assert.match(outcome.event_id, /^evt_/);
      assert.deepEqual(ping.event, { id: outcome.event_id, type: 'ping', created_at: outcome.sent_at, data: { endpoint_id: added.endpoint_id } });
      assert.deepEqual(expectData(await admin().call('GET', `/webhooks/${added.endpoint_id}/deliveries`)), [], 'a ping is not one of the attempts');
      const [entry] = expectData(await admin().call('GET', '/audit?limit=1'));
      assert.equal(entry.action, 'webhook_endpoint.tested');
      assert.match(entry.actor, /^admin:/);
      assert.equal(entry.user_id, null);
      assert.deepEqual(entry.changes.endpoint_id, { old: null, new: added.endpoint_id });
      assert.deepEqual(entry.changes.event_id, { old: null, new: outcome.event_id });
      assert.deepEqual(entry.changes.status, { old: null, new: 204 });
      assert.equal(JSON.stringify(entry).includes(added.secret), false, 'the secret is not in the audit trail');
      assert.equal(JSON.stringify(outcome).includes(added.secret), false, 'the secret is not in the answer');
      // The event id was never stored: there is nothing to redeliver.
      assert.equal((await admin().call('POST', `/webhook-events/${outcome.event_id}/redeliver`, { form: {} })).status, 404);
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });

    test('a disabled endpoint can be pinged (to check it before enabling it) and stays disabled', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url } }), 201);
      receiver.setSecret(added.secret);
      expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/disable`));
      const outcome = expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/test`));
      assert.equal(outcome.delivered, true, JSON.stringify(outcome));
      assert.equal(receiver.received.at(-1)!.event.id, outcome.event_id);
      const [listed] = expectData(await admin().call('GET', '/webhooks')).filter((e: any) => e.endpoint_id === added.endpoint_id);
      assert.equal(listed.enabled, false, 'a ping does not enable the endpoint');
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });

    test('retried with its Idempotency-Key, a test answers the first outcome again and pings once', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url } }), 201);
      receiver.setSecret(added.secret);
      const before = receiver.requests;
      const headers = { 'idempotency-key': `ping-${added.endpoint_id}` };
      const first = await admin().call('POST', `/webhooks/${added.endpoint_id}/test`, { headers });
      const again = await admin().call('POST', `/webhooks/${added.endpoint_id}/test`, { headers });
      assert.deepEqual(expectData(again), expectData(first));
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(receiver.requests - before, 1, 'the retry did not ping again');
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });

    test('the typed AdminClient sends a test event', async () => {
      const client = new AdminClient({ baseUrl: admin().admin.replace(/\/admin\/v0$/, ''), token: admin().token });
      const endpoint = await client.addWebhookEndpoint({ url: receiver.url });
      receiver.setSecret(endpoint.secret);
      const outcome = await client.testWebhookEndpoint(endpoint.endpoint_id);
      assert.equal(outcome.delivered, true, JSON.stringify(outcome));
      assert.equal(outcome.status, 204);
      assert.equal(receiver.received.at(-1)!.event.type, 'ping');
      await client.removeWebhookEndpoint(endpoint.endpoint_id);
    });

    test('account-api webhooks test pings from the command line, prints the status and exits 0; --json gives the answer as the API does', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url } }), 201);
      receiver.setSecret(added.secret);
      const text = await cliOk(admin().workspace, ['webhooks', 'test', added.endpoint_id]);
      const pinged = receiver.received.at(-1)!;
      assert.equal(pinged.event.type, 'ping');
      assert.match(text, new RegExp(`^Webhook endpoint ${added.endpoint_id} \\(.*\\) answered the ping ${pinged.event.id} with 204 in \\d+ ms\\.\\n$`));
      const json = JSON.parse(await cliOk(admin().workspace, ['webhooks', 'test', added.endpoint_id, '--json']));
      assert.equal(json.delivered, true);
      assert.equal(json.status, 204);
      assert.equal(json.event_id, receiver.received.at(-1)!.event.id);
      assert.deepEqual(receiver.rejected, []);
      const [entry] = expectData(await admin().call('GET', '/audit?limit=1'));
      assert.equal(entry.action, 'webhook_endpoint.tested');
      assert.match(entry.actor, /^cli:/);
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: '1' },
);
