// The account operations the CLI and the admin API share: rules first, then the change with its audit entry.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';

import { DomainError } from '../../../src/domain/errors.ts';
import { loadTimezoneCatalog } from '../../../src/domain/timezones.ts';
import { createAccount, deleteAccount, pageAccounts, setPremium, updateAccount } from '../../../src/operations/accounts.ts';
import { adminActor, cliActor, keyActor } from '../../../src/operations/actor.ts';
import { readAudit } from '../../../src/operations/audit.ts';
import { createKey, revokeKey, rollKey } from '../../../src/operations/keys.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';

const timezones = loadTimezoneCatalog();
const code = (expected: string) => (error: unknown) => error instanceof DomainError && error.code === expected;

async function store(t: TestContext): Promise<SqliteStore> {
  const opened = new SqliteStore({ path: ':memory:', environment: 'live', synchronous: 'normal', busyTimeoutMs: 1000, credentialCacheSize: 100 });
  t.after(() => opened.close());
  await opened.migrate();
  return opened;
}

test('the actors are named as the audit trail records them', () => {
  assert.deepEqual(keyActor('AAAABBBBCCCC', 'r1', '10.0.0.1'), { actor: 'key:AAAABBBBCCCC', requestId: 'r1', address: '10.0.0.1' });
  assert.deepEqual(adminActor('tok1', 'r2', '10.0.0.2'), { actor: 'admin:tok1', requestId: 'r2', address: '10.0.0.2' });
  assert.deepEqual(cliActor('ops'), { actor: 'cli:ops', requestId: null, address: null });
});

test('bad input is refused before anything is written or recorded', async (t) => {
  const subject = await store(t);
  const admin = adminActor('tok1', 'r1', '10.0.0.1');
  await assert.rejects(createAccount(subject, admin, timezones, { username: 'bad name' }), code('invalid_username'));
  await assert.rejects(createAccount(subject, admin, timezones, { username: 'ok', timezone: 'Mars/Base' }), code('invalid_timezone'));
  await createAccount(subject, admin, timezones, { username: 'alice' });
  await assert.rejects(updateAccount(subject, admin, timezones, { username: 'alice', name: 'Fine', timezone: 'nowhere' }), code('invalid_timezone'));
  await assert.rejects(createKey(subject, admin, { username: 'alice', environment: 'live', scope: 'root' }), code('invalid_scope'));
  await assert.rejects(createKey(subject, admin, { username: 'alice', environment: 'live', expiresIn: '1d', expiresAt: '2030-01-01' }), /not both/);
  await assert.rejects(createKey(subject, admin, { username: 'alice', environment: 'live', label: 'a\nb' }), code('invalid_label'));
  await assert.rejects(rollKey(subject, admin, { keyId: 'short', environment: 'live' }), code('invalid_key_id'));
  await assert.rejects(revokeKey(subject, admin, { keyId: 'short' }), code('invalid_key_id'));
  assert.equal((await subject.findAccount('alice'))?.name, 'alice', 'a refused update changed the name');
  assert.deepEqual((await readAudit(subject)).map((e) => e.action), ['account.created']);
});

test('updateAccount changes name and timezone, one entry each, and names a missing account', async (t) => {
  const subject = await store(t);
  const admin = adminActor('tok1', 'r1', '10.0.0.1');
  await createAccount(subject, admin, timezones, { username: 'bob', name: 'Bob' });
  const updated = await updateAccount(subject, admin, timezones, { username: 'BOB', name: 'Robert', timezone: 'Europe/Paris' });
  assert.deepEqual([updated.name, updated.timezone], ['Robert', 'Europe/Paris']);
  const entries = await readAudit(subject, { username: 'bob' });
  assert.deepEqual(entries.slice(1).map((e) => [e.action, e.actor, e.requestId, Object.keys(e.changes)]), [
    ['account.updated', 'admin:tok1', 'r1', ['name']],
    ['account.updated', 'admin:tok1', 'r1', ['timezone']],
  ]);
  await assert.rejects(updateAccount(subject, admin, timezones, { username: 'nobody', name: 'X' }), code('account_not_found'));
  await setPremium(subject, admin, { username: 'bob', premium: true });
  await deleteAccount(subject, admin, { username: 'bob' });
  assert.deepEqual((await readAudit(subject, { username: 'bob' })).map((e) => e.action).slice(-2), ['account.premium_changed', 'account.deleted']);
});

test('readAudit refuses an action not in the list and an actor that cannot be one; filters by both exactly', async (t) => {
  const subject = await store(t);
  await createAccount(subject, adminActor('tok1', 'r1', null), timezones, { username: 'ann' });
  await createAccount(subject, cliActor('ops'), timezones, { username: 'ben' });
  await assert.rejects(readAudit(subject, { action: 'account.renamed' }), code('invalid_action'));
  await assert.rejects(readAudit(subject, { action: '' }), code('invalid_action'));
  await assert.rejects(readAudit(subject, { actor: '' }), code('invalid_actor'));
  await assert.rejects(readAudit(subject, { actor: 'cli:ops\n' }), code('invalid_actor'));
  assert.deepEqual((await readAudit(subject, { actor: 'cli:ops', action: 'account.created' })).map((e) => e.username), ['ben']);
  assert.deepEqual(await readAudit(subject, { actor: 'cli:ops', action: 'account.deleted' }), []);
});

test('pageAccounts refuses a prefix outside the username alphabet before reading; pages the matches', async (t) => {
  const subject = await store(t);
  for (const username of ['alice', 'ALINA', 'bob']) await createAccount(subject, cliActor('ops'), timezones, { username });
  await assert.rejects(pageAccounts(subject, { limit: 10, usernamePrefix: 'a%' }), code('invalid_username_prefix'));
  await assert.rejects(pageAccounts(subject, { limit: 10, usernamePrefix: '' }), code('invalid_username_prefix'));
  assert.deepEqual((await pageAccounts(subject, { limit: 10, usernamePrefix: 'Ali' })).map((a) => a.username), ['alice', 'ALINA']);
  assert.deepEqual((await pageAccounts(subject, { limit: 10 })).map((a) => a.username), ['alice', 'ALINA', 'bob']);
});

test('readAudit refuses a malformed since or limit', async (t) => {
  const subject = await store(t);
  await assert.rejects(readAudit(subject, { since: 'yesterday' }), code('invalid_since'));
  await assert.rejects(readAudit(subject, { limit: 0 }), code('invalid_limit'));
  await assert.rejects(readAudit(subject, { limit: 10_001 }), code('invalid_limit'));
  assert.deepEqual(await readAudit(subject, { since: '2026-01-01', limit: 5 }), []);
});
