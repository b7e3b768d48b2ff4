// Bad filters and cursors on GET /admin/v0/audit get stable codes.
import assert from 'node:assert/strict';
import { expectFailure, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin audit: errors', ({ suite: { test }, admin }) => {
  test('since and until must be ISO 8601 with a zone: 400 invalid_since, invalid_until', async () => {
    expectFailure(await admin().call('GET', '/audit?since=yesterday'), 400, 'invalid_since');
    expectFailure(await admin().call('GET', '/audit?until=2026-13-45T99:00'), 400, 'invalid_until');
  });

  test('limit outside 1..100 is 400 invalid_limit; an account cursor is no audit cursor (400 invalid_cursor)', async () => {
    expectFailure(await admin().call('GET', '/audit?limit=500'), 400, 'invalid_limit');
    expectFailure(await admin().call('GET', `/audit?cursor=${Buffer.from('a5').toString('base64url')}`), 400, 'invalid_cursor');
  });

  test('an action not in the list is 400 invalid_action naming every action; an actor that cannot be one is 400 invalid_actor', async () => {
    for (const action of ['account.renamed', 'ACCOUNT.CREATED', 'account.*', '']) {
      const failure = expectFailure(await admin().call('GET', `/audit?action=${encodeURIComponent(action)}`), 400, 'invalid_action');
      assert.equal(failure.field, 'action');
      // The actions as docs/api.md lists them, not read from the code.
      for (const known of ['account.created', 'account.premium_changed', 'key.rolled', 'admin_token.revoked', 'webhook_endpoint.tested']) {
        assert.ok(failure.message.includes(known), `the message does not name ${known}: ${failure.message}`);
      }
    }
    for (const actor of ['', 'a'.repeat(129), 'cli:root\u0007', 'admin:x\n']) {
      expectFailure(await admin().call('GET', `/audit?actor=${encodeURIComponent(actor)}`), 400, 'invalid_actor');
    }
  });

  test('an unknown filter is 400 unknown_parameter; POST is 405', async () => {
    expectFailure(await admin().call('GET', '/audit?who=admin:x'), 400, 'unknown_parameter');
    expectFailure(await admin().call('POST', '/audit', { form: {} }), 405, 'method_not_allowed');
  });
});
