// The admin API's keys work end to end: issued once, listed without secrets, rolled and revoked, and the public port agrees.
import assert from 'node:assert/strict';
import { basic, call } from '../../support/http.ts';
import { expectData, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin keys: happy paths', ({ suite: { test, before }, admin }) => {
  const onPublic = (method: string, path: string, key: string, form?: Record<string, string>) =>
    call(method, `${admin().server.api}${path}`, { auth: basic('alice', key), ...(form === undefined ? {} : { form }) });

  before(async () => {
    expectData(await admin().call('POST', '/accounts', { form: { username: 'alice', premium: 'true' } }), 201);
  });

  test('POST /accounts/{username}/keys answers 201 with the key, this once; the list never shows it', async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const issued = expectData(await admin().call('POST', '/accounts/alice/keys', { json: { label: 'billing', scope: 'write', expires_at: expires } }), 201);
    assert.match(issued.key, /^aapi_live_/);
    assert.equal(issued.key_id, issued.key.slice(10, 22));
    assert.deepEqual([issued.label, issued.scope, issued.expires_at, issued.revoked_at], ['billing', 'write', expires, null]);
    const listed = expectData(await admin().call('GET', '/accounts/alice/keys'));
    assert.deepEqual(listed.map((key: { key_id: string }) => key.key_id), [issued.key_id]);
    assert.ok(!JSON.stringify(listed).includes(issued.key), 'the list shows the secret');
    assert.equal((await onPublic('GET', '/user', issued.key)).status, 200);
  });

  test('a read-scoped key issued here reads on the public port and may not write', async () => {
    const issued = expectData(await admin().call('POST', '/accounts/alice/keys', { form: { scope: 'read' } }), 201);
    assert.equal((await onPublic('GET', '/user', issued.key)).status, 200);
    assert.equal((await onPublic('POST', '/user', issued.key, { name: 'x' })).status, 403);
  });

  test('POST /keys/{key_id}/roll issues a successor that works; with overlap 0 the old key stops at once', async () => {
    const old = expectData(await admin().call('POST', '/accounts/alice/keys', { form: { label: 'ci' } }), 201);
    const rolled = expectData(await admin().call('POST', `/keys/${old.key_id}/roll`, { form: { overlap: '0' } }));
    assert.equal(rolled.old.key_id, old.key_id);
    assert.equal(rolled.old.rolled_into, rolled.successor.key_id);
    assert.equal(rolled.successor.label, 'ci');
    assert.equal(rolled.key.slice(10, 22), rolled.successor.key_id);
    assert.equal((await onPublic('GET', '/user', rolled.key)).status, 200);
    assert.equal((await onPublic('GET', '/user', old.key)).status, 401);
  });

  test('a roll without a body keeps the old key working for the default overlap', async () => {
    const old = expectData(await admin().call('POST', '/accounts/alice/keys', {}), 201);
    const rolled = expectData(await admin().call('POST', `/keys/${old.key_id}/roll`));
    assert.ok(rolled.old.expires_at !== null, 'the old key was given no end');
    assert.equal((await onPublic('GET', '/user', old.key)).status, 200);
  });

  test('DELETE /keys/{key_id} revokes: the public port refuses the key from the next request', async () => {
    const issued = expectData(await admin().call('POST', '/accounts/alice/keys', {}), 201);
    const revoked = expectData(await admin().call('DELETE', `/keys/${issued.key_id}`));
    assert.ok(revoked.revoked_at !== null);
    const answer = await onPublic('GET', '/user', issued.key);
    assert.equal(answer.status, 401);
    assert.equal(answer.body.messages[0].code, 'key_revoked');
    // Revoking again keeps the first time.
    assert.equal(expectData(await admin().call('DELETE', `/keys/${issued.key_id}`)).revoked_at, revoked.revoked_at);
  });
});
