// AdminClient against a real serve with ADMIN_PORT: one typed method per admin operation, failures as AccountApiError.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AccountApiError, AdminClient } from '../../client/src/index.ts';
import { call } from '../support/http.ts';
import { startAdminServer, type AdminServer } from '../e2e/admin/admin-support.ts';

let server: AdminServer;
let client: AdminClient;

before(async () => {
  server = await startAdminServer(null);
  client = new AdminClient({ baseUrl: server.admin.replace(/\/admin\/v0$/, ''), token: server.token, retries: 0 });
});
after(async () => server?.stop());

test('has a method named for every operationId of the admin OpenAPI document', async () => {
  const document = (await call('GET', `${server.admin}/openapi.json`)).body as { paths: Record<string, Record<string, { operationId: string }>> };
  const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
  for (const operation of operations) {
    assert.equal(typeof (client as unknown as Record<string, unknown>)[operation], 'function', `AdminClient has no ${operation}()`);
  }
});

test('accounts: create, page, read, change, delete', async () => {
  const alice = await client.createAccount({ username: 'alice', premium: true, timezone: 'Europe/Kyiv' });
  assert.deepEqual([alice.username, alice.premium, alice.timezone], ['alice', true, 'Europe/Kyiv']);
  await client.createAccount({ username: 'bob' });
  const first = await client.listAccounts({ limit: 1 });
  assert.deepEqual(first.items.map((account) => account.username), ['alice']);
  assert.ok(first.nextCursor !== null);
  const second = await client.listAccounts({ limit: 1, cursor: first.nextCursor });
  assert.deepEqual(second.items.map((account) => account.username), ['bob']);
  assert.equal((await client.getAccount('bob')).name, 'bob');
  const changed = await client.updateAccount('bob', { premium: true, name: 'Bob' });
  assert.deepEqual([changed.premium, changed.name], [true, 'Bob']);
  assert.deepEqual(await client.deleteAccount('bob'), { username: 'bob', deleted: true });
});

test('keys: issue, list, roll, revoke', async () => {
  const issued = await client.createKey('alice', { label: 'sdk', scope: 'read' });
  assert.match(issued.key, /^aapi_live_/);
  assert.deepEqual((await client.listKeys('alice')).map((key) => key.key_id), [issued.key_id]);
  const rolled = await client.rollKey(issued.key_id, { overlap: '0' });
  assert.equal(rolled.old.rolled_into, rolled.successor.key_id);
  const revoked = await client.revokeKey(rolled.successor.key_id);
  assert.ok(revoked.revoked_at !== null);
});

test('audit: entries by username, newest first, a page at a time', async () => {
  const page = await client.readAudit({ username: 'alice', limit: 2 });
  assert.equal(page.items.length, 2);
  assert.ok(page.items[0]!.id > page.items[1]!.id);
  assert.ok(page.nextCursor !== null);
  const rest = await client.readAudit({ username: 'alice', cursor: page.nextCursor });
  assert.ok(rest.items.every((entry) => entry.username === 'alice' && entry.id < page.items[1]!.id));
});

test('a failure is an AccountApiError with the stable code, status and field', async () => {
  await assert.rejects(client.getAccount('nobody'), (error: unknown) => {
    assert.ok(error instanceof AccountApiError);
    assert.deepEqual([error.status, error.code, error.field], [404, 'account_not_found', 'username']);
    return true;
  });
  await assert.rejects(client.createAccount({ username: 'alice' }), { code: 'username_taken', status: 409 });
  const wrong = new AdminClient({ baseUrl: server.admin.replace(/\/admin\/v0$/, ''), token: 'aapi_admin_0000', retries: 0 });
  await assert.rejects(wrong.listAccounts(), { code: 'malformed_admin_token', status: 401 });
});

test('an API key is refused before anything is sent', () => {
  assert.throws(() => new AdminClient({ baseUrl: 'http://127.0.0.1:1', token: 'aapi_live_abc' }), { code: 'wrong_credential_kind' });
});
