// Bad input to the admin API's webhooks gets the right failure and registers nothing.
import assert from 'node:assert/strict';
import { cliJsonError, cliOk, expectCliExit } from '../../support/server-process.ts';
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

  test("the issue's IPv6 spellings of inside addresses, and the special ranges it names, are 400 invalid_webhook_url", async () => {
    for (const host of [
      '[::127.0.0.1]',
      '[::ffff:0:127.0.0.1]',
      '[2002:7f00:1::]',
      '[64:ff9b:1::7f00:1]',
      '[64:ff9b:1::a9fe:a9fe]',
      '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
      '[2001:10::1]',
      '[2001:20::1]',
      '[5f00::1]',
      '[3fff::1]',
    ]) {
      const refused = expectFailure(await admin().call('POST', '/webhooks', { json: { url: `http://${host}:8080/hooks` } }), 400, 'invalid_webhook_url');
      assert.match(refused.message, /not a public address/, host);
    }
    assert.deepEqual(expectData(await admin().call('GET', '/webhooks')), []);
  });

  test('a description holding control or bidirectional characters is 400 invalid_description, over the admin API and the CLI', async () => {
    const descriptions = {
      escape: 'billing \u001b[2J\u001b[31mred',
      'carriage return': 'billing\rfake line',
      bell: 'billing\u0007',
      OSC: 'billing \u001b]0;owned\u0007',
      'line feed': 'billing\nsecond line',
      tab: 'bill\ting',
      'C1 CSI': 'billing \u009b31m',
      'line separator': 'billing\u2028x',
      'right-to-left override': 'billing \u202egnillib',
      'first strong isolate': 'billing \u2068x\u2069',
    };
    for (const [what, description] of Object.entries(descriptions)) {
      const refused = expectFailure(await admin().call('POST', '/webhooks', { json: { url: 'https://93.184.215.14/hooks', description } }), 400, 'invalid_description');
      assert.equal(refused.field, 'description', what);
      const cli = await expectCliExit(admin().workspace, ['webhooks', 'add', 'https://93.184.215.14/hooks', '--description', description, '--json'], 2);
      assert.equal(cliJsonError(cli).code, 'invalid_description', `the CLI took a description with a ${what}`);
    }
    assert.deepEqual(expectData(await admin().call('GET', '/webhooks')), [], 'nothing was registered');
  });

  test('a list of events must name known types, at least one; a form names them once, comma-separated', async () => {
    const url = 'https://93.184.215.14/hooks';
    expectFailure(await admin().call('POST', '/webhooks', { json: { url, events: ['account.updated', 'account.nope'] } }), 400, 'invalid_webhook_events');
    expectFailure(await admin().call('POST', '/webhooks', { json: { url, events: ['account.updated,key.revoked'] } }), 400, 'invalid_webhook_events');
    expectFailure(await admin().call('POST', '/webhooks', { json: { url, events: [] } }), 400, 'invalid_webhook_events');
    const notText = expectFailure(await admin().call('POST', '/webhooks', { json: { url, events: ['account.updated', 7] } }), 400, 'invalid_parameter');
    assert.equal(notText.field, 'events');
    expectFailure(await admin().call('POST', '/webhooks', { json: { url, events: { type: 'account.updated' } } }), 400, 'invalid_parameter');
    const twice = await admin().call('POST', '/webhooks', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `url=${encodeURIComponent(url)}&events=account.updated&events=key.revoked`,
    });
    assert.equal(expectFailure(twice, 400, 'duplicate_parameter').field, 'events');
    assert.deepEqual(expectData(await admin().call('GET', '/webhooks')), [], 'nothing was registered');
  });

  test('unknown endpoints and events are 404; a bad limit is 400 invalid_limit', async () => {
    expectFailure(await admin().call('DELETE', '/webhooks/we_nope'), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('GET', '/webhooks/we_nope'), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('POST', '/webhooks/we_nope/disable', { form: {} }), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('GET', '/webhooks/we_nope/deliveries'), 404, 'webhook_endpoint_not_found');
    expectFailure(await admin().call('POST', '/webhook-events/evt_nope/redeliver', { form: {} }), 404, 'webhook_event_not_found');
    expectFailure(await admin().call('GET', '/webhooks/we_nope/deliveries?limit=0'), 400, 'invalid_limit');
  });

  test('past 100 endpoints an add is 409 too_many_webhook_endpoints, also when several arrive at once; bad cursors are 400', async () => {
    const add = (n: number) => admin().call('POST', '/webhooks', { json: { url: `https://93.184.215.14/hooks/${n}` } });
    for (let n = 0; n < 95; n++) expectData(await add(n), 201);
    const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => add(100 + i)));
    assert.deepEqual(racing.map((result) => result.status).sort(), [201, 201, 201, 201, 201, 409, 409, 409, 409, 409], 'five places were left');
    for (const refused of racing.filter((result) => result.status === 409)) {
      assert.match(expectFailure(refused, 409, 'too_many_webhook_endpoints').message, /100 webhook endpoints.*remove one first/);
    }
    const cli = await expectCliExit(admin().workspace, ['webhooks', 'add', 'https://93.184.215.14/hooks/cli', '--json'], 1);
    assert.equal(cliJsonError(cli).code, 'too_many_webhook_endpoints', 'the CLI is held to the same cap');
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const result = await admin().call('GET', `/webhooks?limit=100${cursor === null ? '' : `&cursor=${cursor}`}`);
      pages.push(...expectData(result));
      cursor = result.body.meta.next_cursor;
    } while (cursor !== null);
    assert.equal(pages.length, 100);
    const listed = JSON.parse((await cliOk(admin().workspace, ['webhooks', 'list', '--json'])).toString());
    assert.deepEqual(listed.map((endpoint: any) => endpoint.endpoint_id), pages.map((endpoint) => endpoint.endpoint_id), 'webhooks list shows every one, in order');
    expectFailure(await admin().call('GET', '/webhooks?cursor=nonsense'), 400, 'invalid_cursor');
    const accountsCursor = (await admin().call('GET', '/accounts?limit=1')).body.meta.next_cursor ?? Buffer.from('a1').toString('base64url');
    expectFailure(await admin().call('GET', `/webhooks?cursor=${accountsCursor}`), 400, 'invalid_cursor');
    const impossibleDay = Buffer.from('w2026-02-30T00:00:00.000Z|we_abc').toString('base64url');
    expectFailure(await admin().call('GET', `/webhooks?cursor=${impossibleDay}`), 400, 'invalid_cursor');
    expectFailure(await admin().call('GET', '/webhooks?limit=101'), 400, 'invalid_limit');
    for (const endpoint of pages) expectData(await admin().call('DELETE', `/webhooks/${endpoint.endpoint_id}`));
  });
});
