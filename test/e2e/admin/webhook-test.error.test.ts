// A test event to an unknown endpoint is 404; a receiver that fails, refuses or never answers is reported in a 200 (the
// test worked, the receiver did not), and none of it counts toward disabling the endpoint. The CLI exits 1 for each.
import assert from 'node:assert/strict';
import { eventually } from '../../support/eventually.ts';
import { cliJsonError, expectCliExit } from '../../support/server-process.ts';
import { startReceiver, type Receiver } from '../../support/webhook-receiver.ts';
import { expectData, expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine(
  'admin webhook test event: errors',
  ({ suite: { test, before, after }, admin }) => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(async () => receiver.stop());

    /** The endpoint as listed: the ping must leave its state as it was. */
    const listed = async (endpointId: string) => expectData(await admin().call('GET', '/webhooks?limit=100')).find((e: any) => e.endpoint_id === endpointId);

    test('an unknown endpoint is 404 webhook_endpoint_not_found, over the API and the CLI, and nothing is audited', async () => {
      const refused = expectFailure(await admin().call('POST', '/webhooks/we_nosuchendpoint/test'), 404, 'webhook_endpoint_not_found');
      assert.equal(refused.field, 'endpoint_id');
      const cli = await expectCliExit(admin().workspace, ['webhooks', 'test', 'we_nosuchendpoint', '--json'], 1);
      assert.equal(cliJsonError(cli).code, 'webhook_endpoint_not_found');
      const audit = expectData(await admin().call('GET', '/audit?limit=100'));
      assert.equal(audit.some((entry: any) => entry.action === 'webhook_endpoint.tested'), false, 'a test of nothing was audited');
    });

    test('a receiver answering 500 is a 200 with status 500 and its words; the endpoint is not marked failing; the CLI exits 1', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url } }), 201);
      receiver.failWith = 500;
      try {
        const outcome = expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/test`));
        assert.equal(outcome.delivered, false);
        assert.equal(outcome.status, 500);
        assert.equal(outcome.response, 'receiver is failing on purpose');
        assert.equal(outcome.error, null);
        const cli = await expectCliExit(admin().workspace, ['webhooks', 'test', added.endpoint_id], 1);
        assert.match(cli.stdout, new RegExp(`^Webhook endpoint ${added.endpoint_id} \\(.*\\) refused the ping evt_\\S+ with 500 in \\d+ ms: "receiver is failing on purpose"\\.\\n$`));
        const json = await expectCliExit(admin().workspace, ['webhooks', 'test', added.endpoint_id, '--json'], 1);
        assert.equal(JSON.parse(json.stdout).status, 500, 'the outcome is on stdout under --json too');
      } finally {
        receiver.failWith = null;
      }
      const endpoint = await listed(added.endpoint_id);
      assert.equal(endpoint.failing_since, null, 'a failed ping started a run of failures');
      assert.equal(endpoint.enabled, true);
      assert.deepEqual(expectData(await admin().call('GET', `/webhooks/${added.endpoint_id}/deliveries`)), []);
      const [entry] = expectData(await admin().call('GET', '/audit?limit=1'));
      assert.deepEqual(entry.changes.status, { old: null, new: 500 });
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });

    test('a receiver that refuses the connection is a 200 with status null and the refusal; the CLI exits 1 and says so', async () => {
      const closed = await startReceiver();
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: closed.url } }), 201);
      await closed.stop();
      const outcome = expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/test`));
      assert.equal(outcome.delivered, false);
      assert.equal(outcome.status, null);
      assert.equal(outcome.response, null);
      assert.match(outcome.error, /ECONNREFUSED/);
      const cli = await expectCliExit(admin().workspace, ['webhooks', 'test', added.endpoint_id], 1);
      assert.match(cli.stdout, /did not answer the ping evt_\S+: ECONNREFUSED/);
      assert.equal((await listed(added.endpoint_id)).failing_since, null);
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });

    test('a receiver that holds its answer past the delivery time limit is a 200 with status null, "no answer within 10000 ms"', async () => {
      const added = expectData(await admin().call('POST', '/webhooks', { form: { url: receiver.url } }), 201);
      receiver.setSecret(added.secret);
      const release = receiver.holdAnswers();
      try {
        const outcome = expectData(await admin().call('POST', `/webhooks/${added.endpoint_id}/test`));
        assert.equal(outcome.delivered, false);
        assert.equal(outcome.status, null);
        assert.equal(outcome.error, 'no answer within 10000 ms');
        // The server closes the connection as it answers: the receiver may see the close just after the answer arrives.
        await eventually('the held request given up on', async () => receiver.abandonedWhileHeld, (abandoned) => abandoned >= 1);
      } finally {
        release();
      }
      assert.equal((await listed(added.endpoint_id)).failing_since, null);
      expectData(await admin().call('DELETE', `/webhooks/${added.endpoint_id}`));
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: '1' },
);
