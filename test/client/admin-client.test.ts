// AdminClient against a real serve with ADMIN_PORT: one typed method per admin operation, failures as AccountApiError.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { AccountApiError, AdminClient } from '../../client/src/index.ts';
import { call } from '../support/http.ts';
import { startAdminServer, type AdminServer } from '../e2e/admin/admin-support.ts';
import { recordingFetch, recordingSleep } from './recording.ts';

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

test('accounts searched by username prefix, ignoring case, with _ as itself; audit filtered by actor and action', async () => {
  for (const username of ['alina', 'a_b', 'axb']) await client.createAccount({ username });
  const ali = await client.listAccounts({ usernamePrefix: 'ALI', limit: 1 });
  assert.deepEqual(ali.items.map((account) => account.username), ['alice']);
  const rest = await client.listAccounts({ usernamePrefix: 'ALI', cursor: ali.nextCursor! });
  assert.deepEqual(rest.items.map((account) => account.username), ['alina']);
  assert.deepEqual((await client.listAccounts({ usernamePrefix: 'a_' })).items.map((account) => account.username), ['a_b']);
  await assert.rejects(client.listAccounts({ usernamePrefix: 'a%' }), { code: 'invalid_username_prefix', status: 400 });
  const actor = `admin:${server.token.slice(11, 23)}`;
  const created = await client.readAudit({ actor, action: 'account.created', limit: 100 });
  assert.deepEqual(created.items.map((entry) => entry.username).slice(0, 3), ['axb', 'a_b', 'alina']);
  assert.ok(created.items.every((entry) => entry.actor === actor && entry.action === 'account.created'));
  await assert.rejects(client.readAudit({ action: 'account.renamed' }), { code: 'invalid_action', status: 400 });
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

const TOKEN = 'aapi_admin_000000000000_00000000000000000000000000000000_0000';
const ISSUED = { status: 'success', messages: [], meta: {}, data: { key_id: 'k1', key: 'aapi_live_x' } };

/**
 * A stand-in admin API on loopback that writes down each request's headers and answers the nth with `answers[n]`: a status and
 * envelope, or 'drop' to close the connection without an answer (the answer lost on the way back).
 */
async function scriptedServer(answers: readonly ({ status: number; body: object } | 'drop')[]) {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((request, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      const answer = answers[received.length] ?? answers.at(-1)!;
      received.push(request.headers);
      if (answer === 'drop') return void request.socket.destroy();
      response.writeHead(answer.status, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, received, close: () => new Promise<void>((closed) => server.close(() => closed())) };
}

const UNAVAILABLE = { status: 503, body: { status: 'error', messages: [{ code: 'store_unavailable', message: 'down' }], meta: {}, data: null } };

test('a write retried after a 503 sends the same Idempotency-Key on both attempts: one per call, a new one per call', async () => {
  const server = await scriptedServer([UNAVAILABLE, { status: 201, body: ISSUED }, UNAVAILABLE, { status: 201, body: ISSUED }]);
  try {
    const client = new AdminClient({ baseUrl: server.baseUrl, token: TOKEN, retries: 2, sleep: recordingSleep().sleep });
    assert.equal((await client.createKey('alice')).key, 'aapi_live_x');
    await client.createKey('alice');
    const keys = server.received.map((headers) => headers['idempotency-key']);
    assert.equal(keys.length, 4, `${keys.length} attempts`);
    assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'the key is not a random UUID');
    assert.equal(keys[1], keys[0], 'the retry sent another key (or none)');
    assert.equal(keys[3], keys[2], 'the second call’s retry sent another key');
    assert.notEqual(keys[2], keys[0], 'two calls shared one key');
  } finally {
    await server.close();
  }
});

test('a write whose answer was lost is retried with its key; a key the caller gives is the one sent', async () => {
  const server = await scriptedServer(['drop', { status: 201, body: ISSUED }]);
  try {
    const client = new AdminClient({ baseUrl: server.baseUrl, token: TOKEN, retries: 2, sleep: recordingSleep().sleep });
    assert.equal((await client.rollKey('k0', { overlap: '0', idempotencyKey: 'roll-k0-once' })).key, 'aapi_live_x');
    assert.deepEqual(server.received.map((headers) => headers['idempotency-key']), ['roll-k0-once', 'roll-k0-once']);
  } finally {
    await server.close();
  }
});

test('a 409 other than idempotency_key_in_use is final: username_taken is not retried', async () => {
  const { fetch, exchanges } = recordingFetch();
  const patient = new AdminClient({ baseUrl: server.admin.replace(/\/admin\/v0$/, ''), token: server.token, retries: 2, fetch, sleep: recordingSleep().sleep });
  await patient.createAccount({ username: 'taken-once' });
  await assert.rejects(patient.createAccount({ username: 'taken-once' }), { code: 'username_taken', status: 409 });
  assert.deepEqual(exchanges.map((exchange) => exchange.status), [201, 409]);
});

test('against the real admin API, a creation whose answer was lost is made once: the retry gets its answer again', async () => {
  // The first attempt reaches the server and is answered; the answer is then lost, as on a connection cut on the way back.
  const { fetch: recording, exchanges } = recordingFetch();
  let lost = 0;
  const losing: typeof globalThis.fetch = async (input, init) => {
    const response = await recording(input, init);
    if (init?.method === 'GET' || lost++ > 0) return response;
    await response.arrayBuffer();
    throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
  };
  const client = new AdminClient({ baseUrl: server.admin.replace(/\/admin\/v0$/, ''), token: server.token, retries: 2, fetch: losing, sleep: recordingSleep().sleep });
  const account = await client.createAccount({ username: 'lost-answer' });
  assert.equal(account.username, 'lost-answer');
  lost = 0;
  const issued = await client.createKey('lost-answer', { label: 'once' });
  assert.deepEqual((await client.listKeys('lost-answer')).map((key) => key.key_id), [issued.key_id], 'the retry issued a second key');
  const writes = exchanges.filter((exchange) => exchange.method !== 'GET');
  assert.deepEqual(writes.map((exchange) => exchange.status), [201, 201, 201, 201]);
  assert.equal(writes[1]!.responseHeaders?.get('idempotent-replayed'), 'true', 'the account’s retry was not a replay');
  assert.equal(writes[3]!.responseHeaders?.get('idempotent-replayed'), 'true', 'the key’s retry was not a replay');
  const created = (await client.readAudit({ username: 'lost-answer' })).items.filter((entry) => entry.action === 'account.created');
  assert.equal(created.length, 1, 'the account was created twice');
});
