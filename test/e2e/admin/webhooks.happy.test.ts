// The admin API's webhooks: register (secret shown once), list, disable, enable, attempts, redeliver, remove; deliveries verified
// by standardwebhooks.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdminClient } from '../../../client/src/index.ts';
import { eventually } from '../../support/eventually.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { expectData, onEveryEngine } from './admin-support.ts';

onEveryEngine(
  'admin webhooks: happy',
  ({ suite: { test, before, after }, admin }) => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(async () => receiver.stop());

    test('an endpoint registered over the admin API gets signed events; its attempts are listed and an event can be sent again', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url, events: 'account.created', description: 'admin' } }), 201);
      assert.match(added.secret, /^whsec_/);
      assert.deepEqual(added.events, ['account.created']);
      receiver.setSecret(added.secret);
      expectData(await admin().call('POST', '/accounts', { form: { username: 'alice' } }), 201);
      await receiver.waitFor('account.created of alice', (received) => received.some((r) => r.event.data.object?.username === 'alice'));
      assert.deepEqual(receiver.rejected, []);
      const listed = expectData(await admin().call('GET', '/webhooks'));
      assert.equal(listed.length, 1);
      assert.equal('secret' in listed[0], false, 'the secret is shown once');
      // The sender records the attempt after the receiver has answered: the receiver can hold the event before the list does.
      const [attempt] = await eventually(
        'the delivery attempt listed',
        async () => expectData(await admin().call('GET', `/webhooks/${added.endpoint_id}/deliveries?limit=5`)),
        (attempts: any[]) => attempts.length > 0,
      );
      assert.equal(attempt.status, 204);
      const eventId = receiver.received[0]!.event.id;
      assert.equal(attempt.event_id, eventId);
      assert.deepEqual(expectData(await admin().call('POST', `/webhook-events/${eventId}/redeliver`, { form: {} })), { event_id: eventId, endpoints: [added.endpoint_id] });
      await receiver.waitFor('the redelivery', (received) => received.filter((r) => r.event.id === eventId).length === 2);
    });

    test('a receiver that never ends its answer has the delivery recorded from its status and first 256 bytes, and its socket closed', async () => {
      let sawClose: (value: boolean) => void = () => undefined;
      const closed = new Promise<boolean>((resolve) => (sawClose = resolve));
      const dribbler = createServer((request, response) => {
        request.resume();
        response.writeHead(200, { 'content-type': 'text/plain' }).write('y'.repeat(300));
        const drip = setInterval(() => response.write('.'), 20);
        request.socket.once('close', () => {
          clearInterval(drip);
          sawClose(true);
        });
      });
      dribbler.listen(0, '127.0.0.1');
      await once(dribbler, 'listening');
      try {
        const url = `http://127.0.0.1:${(dribbler.address() as AddressInfo).port}/hooks`;
        const added = expectData(await admin().call('POST', '/webhooks', { form: { url, events: 'account.deleted' } }), 201);
        expectData(await admin().call('POST', '/accounts', { form: { username: 'dribbled' } }), 201);
        expectData(await admin().call('DELETE', '/accounts/dribbled'));
        assert.equal(await closed, true, 'the receiver saw its connection closed');
        const attempts: any[] = await eventually(
          'the dribbled delivery attempt listed',
          async () => expectData(await admin().call('GET', `/webhooks/${added.endpoint_id}/deliveries`)),
          (listed: any[]) => listed.length > 0,
        );
        assert.equal(attempts.length, 1, 'one attempt was recorded');
        assert.equal(attempts[0].error, null, `the attempt failed: ${attempts[0].error}`);
        assert.equal(attempts[0].status, 200);
        assert.equal(attempts[0].response, 'y'.repeat(256));
        expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
      } finally {
        dribbler.closeAllConnections();
        dribbler.close();
      }
    });

    test('events may be sent as the JSON list answers show, or comma-separated; an endpoint listed can be registered again as it reads', async () => {
      const listed = expectData(await admin().call('POST', '/webhooks', { json: { url: receiver.url, events: ['account.updated', 'key.revoked'] } }), 201);
      assert.deepEqual(listed.events, ['account.updated', 'key.revoked']);
      const texted = expectData(await admin().call('POST', '/webhooks', { json: { url: receiver.url, events: 'account.updated, key.revoked' } }), 201);
      assert.deepEqual(texted.events, ['account.updated', 'key.revoked']);
      const formed = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url, events: 'key.revoked,account.updated' } }), 201);
      assert.deepEqual(formed.events, ['key.revoked', 'account.updated']);
      const echoed = expectData(await admin().call('POST', '/webhooks', { json: { url: listed.url, events: listed.events, description: 'again' } }), 201);
      assert.deepEqual(echoed.events, listed.events);
      for (const endpoint of [listed, texted, formed, echoed]) expectData(await admin().call('DELETE', `/webhooks/${endpoint.endpoint_id}`));
    });

    test('the endpoints are listed a page at a time, oldest first, by the admin API and the typed AdminClient', async () => {
      const added = [];
      for (const description of ['page one', 'page two', 'page three']) {
        added.push(expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url, events: 'account.deleted', description } }), 201));
      }
      const whole = await admin().call('GET', '/webhooks?limit=100');
      assert.equal(whole.body.meta.next_cursor, null, 'one page holds them all');
      const all = expectData(whole).map((endpoint: any) => endpoint.endpoint_id);
      assert.deepEqual(new Set(all.slice(-3)), new Set(added.map((endpoint) => endpoint.endpoint_id)), 'oldest first: the three just added come last');
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const result = await admin().call('GET', `/webhooks?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
        const page = expectData(result);
        assert.ok(page.length <= 2, `a page of ${page.length} with limit=2`);
        walked.push(...page.map((endpoint: any) => endpoint.endpoint_id));
        cursor = result.body.meta.next_cursor;
      } while (cursor !== null);
      assert.deepEqual(walked, all);
      const client = new AdminClient({ baseUrl: admin().admin.replace(/\/admin\/v0$/, ''), token: admin().token });
      const first = await client.listWebhookEndpoints({ limit: 1 });
      assert.equal(first.items.length, 1);
      assert.ok(first.nextCursor !== null, 'the client sees there is more');
      const second = await client.listWebhookEndpoints({ limit: 100, cursor: first.nextCursor });
      assert.deepEqual([...first.items, ...second.items].map((endpoint) => endpoint.endpoint_id), all);
      assert.equal(second.nextCursor, null);
      for (const endpoint of added) expectData(await admin().call('DELETE', `/webhooks/${endpoint.endpoint_id}`));
    });

    test('one endpoint is read by its id, disabled or not, as the list shows it; the typed AdminClient reads it too', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url, events: 'key.revoked', description: 'read me' } }), 201);
      const { secret, ...shown } = added;
      assert.match(secret, /^whsec_/);
      assert.deepEqual(expectData(await admin().call('GET', `/webhooks/${added.endpoint_id}`)), shown, 'the endpoint as registered, without its secret');
      const disabled = expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/disable`, { form: {} }));
      const read = expectData(await admin().call('GET', `/webhooks/${added.endpoint_id}`));
      assert.equal(read.enabled, false);
      assert.deepEqual(read, disabled);
      const client = new AdminClient({ baseUrl: admin().admin.replace(/\/admin\/v0$/, ''), token: admin().token });
      assert.deepEqual(await client.getWebhookEndpoint(added.endpoint_id), disabled);
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });

    test('the typed AdminClient disables, enables and removes an endpoint', async () => {
      const client = new AdminClient({ baseUrl: admin().admin.replace(/\/admin\/v0$/, ''), token: admin().token });
      const endpoint = await client.addWebhookEndpoint({ url: receiver.url });
      const disabled = await client.disableWebhookEndpoint(endpoint.endpoint_id);
      assert.equal(disabled.enabled, false);
      assert.match(disabled.disabled_reason!, /^disabled by admin:/);
      assert.equal((await client.enableWebhookEndpoint(endpoint.endpoint_id)).enabled, true);
      assert.deepEqual(await client.listWebhookDeliveries(endpoint.endpoint_id), []);
      await client.removeWebhookEndpoint(endpoint.endpoint_id);
      assert.equal((await client.listWebhookEndpoints()).items.some((e) => e.endpoint_id === endpoint.endpoint_id), false);
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '100' },
);
