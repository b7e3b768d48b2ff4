// Bad filters and cursors on GET /admin/v0/audit get stable codes.
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

  test('an unknown filter is 400 unknown_parameter; POST is 405', async () => {
    expectFailure(await admin().call('GET', '/audit?actor=admin:x'), 400, 'unknown_parameter');
    expectFailure(await admin().call('POST', '/audit', { form: {} }), 405, 'method_not_allowed');
  });
});
