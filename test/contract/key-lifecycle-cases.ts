// The store contract for key scopes, expiry, rolls, the key limit and the audit trail: the same cases on every engine.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

import { issueKey } from '../../src/domain/api-keys.ts';
import { MAX_ACTIVE_KEYS, type AuditActor, type NewApiKey, type Store } from '../../src/store/store.ts';
import { requiring } from '../support/requiring.ts';
import { account, domainCode, freshStore, newKey, type MakeStore } from './contract-support.ts';

const CLI: AuditActor = { actor: 'cli:operator', requestId: null, address: null };
const KEY: AuditActor = { actor: 'key:AAAABBBBCCCC', requestId: 'req-1', address: '203.0.113.7' };
const DAY = 86_400_000;

function scopedKey(scope: 'read' | 'write', expiresAt: Date | null = null, label: string | null = null): NewApiKey {
  return { ...newKey(issueKey('live'), label), scope, expiresAt };
}

async function withOwner(store: Store, username = 'alice'): Promise<void> {
  await store.createAccount(account(username, { premium: true }));
}

export function defineKeyLifecycleCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  const { describe, test } = requiring(skip);

  describe(`${engineName} store: key scope and expiry`, () => {
    test('a key keeps its scope and expiry; by default it is write and never expires', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await withOwner(store);
      const expiresAt = new Date(Date.now() + 90 * DAY);
      const read = await store.createKey('alice', scopedKey('read', expiresAt, 'dashboard'));
      const plain = await store.createKey('alice', newKey(issueKey('live')));
      assert.equal(read.scope, 'read');
      assert.equal(read.expiresAt, expiresAt.toISOString());
      assert.equal(read.rolledInto, null);
      assert.equal(plain.scope, 'write', 'a key made without a scope should be write');
      assert.equal(plain.expiresAt, null, 'a key made without an expiry should never expire');
      const credential = await store.findCredential(read.keyId);
      assert.equal(credential?.scope, 'read');
      assert.equal(credential?.expiresAtMs, expiresAt.getTime(), 'authentication reads the expiry from the credential row');
      assert.equal((await store.findCredential(plain.keyId))?.expiresAtMs, null);
      const listed = new Map((await store.listKeys('alice')).map((k) => [k.keyId, [k.scope, k.expiresAt]]));
      assert.deepEqual(listed.get(read.keyId), ['read', expiresAt.toISOString()], 'listKeys lost the scope or expiry');
      assert.deepEqual(listed.get(plain.keyId), ['write', null]);
    });

    test(`at most ${MAX_ACTIVE_KEYS} keys neither expired nor revoked; the next is refused and stored nowhere`, async (t) => {
      const { store } = await freshStore(t, makeStore);
      await withOwner(store);
      const revoked = await store.createKey('alice', newKey(issueKey('live')));
      await store.revokeKey(revoked.keyId);
      // A key that has expired no longer counts. Made already expired, so no clock has to run out during the test (a key
      // made to expire in 1.5 s could expire early on a loaded machine, or outlive the refusal: either proved nothing).
      await store.createKey('alice', scopedKey('write', new Date(Date.now() - 1000)));
      for (let i = 0; i < MAX_ACTIVE_KEYS; i++) await store.createKey('alice', newKey(issueKey('live')));
      const refused = newKey(issueKey('live'));
      await assert.rejects(
        store.createKey('alice', refused, CLI),
        (error: unknown) => domainCode('too_many_keys', 'conflict')(error) && /revoke one first/.test((error as Error).message),
        'a 21st active key was issued, or the refusal does not say what to do',
      );
      assert.equal(await store.findCredential(refused.keyId), null, 'the refused key was stored');
      assert.deepEqual(await store.listAudit(), [], 'a refused key was audited');
    });
  });

  describe(`${engineName} store: rolling a key`, () => {
    test('the successor keeps owner, label, scope and lifetime; the old key expires when the overlap ends and names its successor', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await withOwner(store);
      const old = await store.createKey('alice', scopedKey('read', new Date(Date.now() + 30 * DAY), 'ci'));
      const successor = newKey(issueKey('live'));
      const overlapEnd = new Date(Date.now() + DAY);
      const rolled = await store.rollKey(old.keyId, successor, overlapEnd, CLI);
      assert.equal(rolled.successor.keyId, successor.keyId);
      assert.equal(rolled.successor.username, 'alice');
      assert.equal(rolled.successor.label, 'ci');
      assert.equal(rolled.successor.scope, 'read');
      const lifetime = Date.parse(rolled.successor.expiresAt!) - Date.parse(rolled.successor.createdAt);
      assert.ok(Math.abs(lifetime - 30 * DAY) < 5000, `the successor should live 30 days like its predecessor, not ${lifetime} ms`);
      assert.equal(rolled.old.expiresAt, overlapEnd.toISOString());
      assert.equal(rolled.old.rolledInto, successor.keyId);
      assert.equal((await store.findCredential(old.keyId))?.expiresAtMs, overlapEnd.getTime());
      const listed = new Map((await store.listKeys('alice')).map((k) => [k.keyId, k.rolledInto]));
      assert.deepEqual([...listed].sort(), [[old.keyId, successor.keyId], [successor.keyId, null]].sort(), 'listKeys should show which key rolled into which');
    });

    test('an overlap of 0 expires the old key at once, seen by another store on its next read; an overlap never lengthens a life', async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      await withOwner(store);
      const other = subject.openAnother();
      const short = await store.createKey('alice', scopedKey('write', new Date(Date.now() + 60_000)));
      await other.findCredential(short.keyId); // cached there, if that engine caches
      const rolled = await store.rollKey(short.keyId, newKey(issueKey('live')), new Date(Date.now() + 7 * DAY), CLI);
      assert.equal(rolled.old.expiresAt, short.expiresAt, 'a 7-day overlap lengthened a key due to expire in a minute');
      const plain = await store.createKey('alice', newKey(issueKey('live')));
      assert.equal((await other.findCredential(plain.keyId))?.expiresAtMs, null);
      await store.rollKey(plain.keyId, newKey(issueKey('live')), new Date(), CLI);
      const seen = await other.findCredential(plain.keyId);
      assert.ok(seen?.expiresAtMs !== null && seen!.expiresAtMs! <= Date.now(), 'the other store still sees the rolled key without its expiry');
    });

    test('a revoked, expired or unknown key cannot be rolled, and a refused roll changes nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await withOwner(store);
      const revoked = await store.createKey('alice', newKey(issueKey('live')));
      await store.revokeKey(revoked.keyId);
      await assert.rejects(store.rollKey(revoked.keyId, newKey(issueKey('live')), new Date(), CLI), domainCode('key_inactive', 'conflict'));
      await assert.rejects(store.rollKey(revoked.keyId, newKey(issueKey('live')), new Date(), CLI), /revoked/);
      const expiring = await store.createKey('alice', scopedKey('write', new Date(Date.now() + 100)));
      await sleep(150);
      await assert.rejects(store.rollKey(expiring.keyId, newKey(issueKey('live')), new Date(), CLI), /expired at/);
      await assert.rejects(store.rollKey('ZZZZZZZZZZZZ', newKey(issueKey('live')), new Date(), CLI), domainCode('key_not_found', 'not_found'));
      const keys = await store.listKeys('alice');
      assert.equal(keys.length, 2, 'a refused roll issued a successor');
      assert.ok(keys.every((k) => k.rolledInto === null), 'a refused roll marked a key as rolled');
      assert.deepEqual((await store.listAudit()).filter((e) => e.action === 'key.rolled'), [], 'a refused roll was audited');
    });

    test(`rolling an account's ${MAX_ACTIVE_KEYS}th key with an overlap is refused; with no overlap it is not`, async (t) => {
      const { store } = await freshStore(t, makeStore);
      await withOwner(store);
      const keys = [];
      for (let i = 0; i < MAX_ACTIVE_KEYS; i++) keys.push(await store.createKey('alice', newKey(issueKey('live'))));
      const first = keys[0]!;
      await assert.rejects(store.rollKey(first.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI), domainCode('too_many_keys'));
      const untouched = (await store.listKeys('alice')).find((k) => k.keyId === first.keyId)!;
      assert.equal(untouched.expiresAt, null, 'the refused roll left the old key set to expire');
      assert.equal(untouched.rolledInto, null);
      const rolled = await store.rollKey(first.keyId, newKey(issueKey('live')), new Date(), CLI);
      assert.equal(rolled.old.rolledInto, rolled.successor.keyId);
    });
  });

  describe(`${engineName} store: the audit trail`, () => {
    test('every change given an actor is recorded with who, what, the fields changed, the request id and the address', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const created = await store.createAccount(account('alice', { name: 'Alice' }), CLI);
      const key = await store.createKey('alice', scopedKey('read', null, 'ci'), CLI);
      await store.updateName(created.id, 'Alice L.', KEY);
      await store.updateTimezone(created.id, 'Europe/Paris', KEY);
      await store.setPremium('alice', true, CLI);
      await store.updatePremium(created.id, false, CLI);
      const rolled = await store.rollKey(key.keyId, newKey(issueKey('live')), new Date(), CLI);
      await store.revokeKey(rolled.successor.keyId, CLI);
      await store.deleteAccount('alice', CLI);
      const events = await store.listAudit();
      assert.deepEqual(
        events.map((e) => e.action),
        [
          'account.created',
          'key.created',
          'account.updated',
          'account.updated',
          'account.premium_changed',
          'account.premium_changed',
          'key.rolled',
          'key.revoked',
          'account.deleted',
        ],
      );
      for (const event of events) {
        assert.equal(event.accountId, created.id, `${event.action} names the wrong account`);
        assert.equal(event.username, 'alice');
        assert.ok(!Number.isNaN(Date.parse(event.occurredAt)), `${event.action}: occurredAt is not a date`);
      }
      const [made, keyMade, renamed, moved, premiumOn, premiumOff, roll, revoke] = events;
      assert.deepEqual(made!.changes.name, { old: null, new: 'Alice' });
      assert.equal(made!.actor, 'cli:operator');
      assert.equal(made!.requestId, null);
      assert.deepEqual(keyMade!.changes, {
        key_id: { old: null, new: key.keyId },
        label: { old: null, new: 'ci' },
        scope: { old: null, new: 'read' },
        expires_at: { old: null, new: null },
      });
      assert.deepEqual(renamed!.changes, { name: { old: 'Alice', new: 'Alice L.' } });
      assert.deepEqual([renamed!.actor, renamed!.requestId, renamed!.address], ['key:AAAABBBBCCCC', 'req-1', '203.0.113.7']);
      assert.deepEqual(moved!.changes, { timezone: { old: 'UTC', new: 'Europe/Paris' } });
      assert.deepEqual(premiumOn!.changes, { premium: { old: false, new: true } });
      assert.deepEqual(premiumOff!.changes, { premium: { old: true, new: false } });
      assert.deepEqual(roll!.changes.key_id, { old: key.keyId, new: rolled.successor.keyId });
      assert.deepEqual(revoke!.changes.revoked_at?.old, null);
      const text = JSON.stringify(events);
      assert.ok(!text.includes('aapi_live_'), 'an audit entry holds a key');
    });

    test('no actor, no entry; a change that changes nothing and a refused change record nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const created = await store.createAccount(account('bob', { name: 'Bob' }));
      const key = await store.createKey('bob', newKey(issueKey('live')));
      assert.deepEqual(await store.listAudit(), [], 'a change without an actor was recorded');
      await store.updateName(created.id, 'Bob', KEY);
      await store.setPremium('bob', false, CLI);
      await store.revokeKey(key.keyId, CLI);
      await store.revokeKey(key.keyId, CLI);
      await assert.rejects(store.createAccount(account('BOB'), CLI), domainCode('username_taken'));
      await assert.rejects(store.deleteAccount('nobody', CLI), domainCode('account_not_found'));
      assert.deepEqual((await store.listAudit()).map((e) => e.action), ['key.revoked'], 'only the first revocation changed anything');
    });

    test('listAudit filters by username ignoring case (also once deleted) and by time, keeps the newest under a limit, oldest first', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('Carol'), CLI);
      await store.createAccount(account('dave'), CLI);
      await sleep(20);
      const middle = new Date();
      await sleep(20);
      await store.setPremium('carol', true, CLI);
      await store.deleteAccount('carol', CLI);
      assert.deepEqual((await store.listAudit({ username: 'CAROL' })).map((e) => e.action), ['account.created', 'account.premium_changed', 'account.deleted']);
      assert.deepEqual((await store.listAudit({ since: middle })).map((e) => e.action), ['account.premium_changed', 'account.deleted']);
      assert.deepEqual((await store.listAudit({ username: 'dave', since: middle })).length, 0);
      assert.deepEqual((await store.listAudit({ limit: 2 })).map((e) => e.action), ['account.premium_changed', 'account.deleted']);
    });

    test('pruneAudit deletes entries older than the instant given, and only those', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('erin'), CLI);
      await sleep(20);
      const cut = new Date();
      await sleep(20);
      await store.setPremium('erin', true, CLI);
      assert.equal(await store.pruneAudit(cut), 1);
      assert.deepEqual((await store.listAudit()).map((e) => e.action), ['account.premium_changed']);
      assert.equal(await store.pruneAudit(cut), 0);
    });

    test('createAccountWithKey given an actor records the account and its key in the same transaction', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const key = scopedKey('read', null, 'seed');
      const created = await store.createAccountWithKey(account('frank'), key, CLI);
      assert.deepEqual(
        (await store.listAudit()).map((e) => [e.action, e.accountId, e.changes.key_id?.new ?? null]),
        [['account.created', created.id, null], ['key.created', created.id, key.keyId]],
      );
      await assert.rejects(store.createAccountWithKey(account('FRANK'), scopedKey('write'), CLI), domainCode('username_taken'));
      assert.equal((await store.listAudit()).length, 2, 'a refused creation was audited');
    });

    test('recordAudit records a change the store does not make itself (an admin token)', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const admin: AuditActor = { actor: 'admin:tok123', requestId: 'r-9', address: '198.51.100.1' };
      const event = await store.recordAudit({ action: 'admin_token.created', accountId: null, username: null, changes: { token_id: { old: null, new: 'tok456' } } }, admin);
      assert.equal(event.actor, 'admin:tok123');
      assert.deepEqual(await store.listAudit(), [event]);
    });
  });
}
