// Bad input to the admin API's webhooks gets the right failure and registers nothing.
import assert from 'node:assert/strict';
import { expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin webhooks: errors', ({ suite: { test }, admin }) => {
  test('a URL that is not http(s), or at a private address, is 400 invalid_webhook_url; an unknown event type 400 invalid_webhook_events', async () => {
    for (const url of ['ftp://example.com/', 'http://127.0.0.1:9/x', 'http://localhost/x', 'http://169.254.169.254/']) {
      expectFailure(await admin().call('POST', '/webhooks', { form: { url } }), 400, 'invalid_webhook_url');
    }
    expectFailure(await admin().call('POST', '/webhooks', { form: { url: 'https://example.com/', events: 'admin_token.created' } }), 400, 'invalid_webhook_events');
    expectFailure(await admin().call('POST', '/webhooks', { form: {} }), 400, 'missing_parameter');
    assert.deepEqual(expectData(await admin().call('GET', '/webhooks')), []);
  });

  test('unknown endpoints and events are 404; a bad limit is 400 invalid_limit', async () => {
    expectFailure(await admin().call('DELETE', '/webhooks/we_nope'), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('POST', '/webhooks/we_nope/disable', { form: {} }), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('GET', '/webhooks/we_nope/deliveries'), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('POST', '/webhook-events/evt_nope/redeliver', { form: {} }), 404, 'webhook_event_not_found');
    expectFailure(await admin().call('GET', '/webhooks/we_nope/deliveries?limit=0'), 400, 'invalid_limit');
  });
});
