// Contract cases for the audit trail: every audited change recorded with who, what and the fields changed; nothing for no
// change or a refused one; filtering, paging back in time and pruning.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { requiring } from '../support/requiring.ts';

import { issueKey } from '../../src/domain/api-keys.ts';
import type { AuditActor } from '../../src/store/store.ts';
import { account, domainCode, freshStore, newKey, scopedKey, type MakeStore } from './contract-support.ts';

const CLI: AuditActor = { actor: 'cli:operator', requestId: null, address: null };
const KEY: AuditActor = { actor: 'key:AAAABBBBCCCC', requestId: 'req-1', address: '203.0.113.7' };

export function defineAuditCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
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

  describe(`${engineName} store: audit pages`, () => {
    test('entries before an id, and before an instant, for walking the trail back in time', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const actor = { actor: 'admin:x', requestId: 'r', address: '127.0.0.1' };
      for (const name of ['ann', 'ben', 'cat']) await store.createAccount(account(name), actor);
      const all = await store.listAudit();
      assert.equal(all.length, 3);
      const older = await store.listAudit({ beforeId: all[2]!.id, limit: 1 });
      assert.deepEqual(older.map((e) => e.username), ['ben']);
      const untilLast = await store.listAudit({ until: new Date(Date.parse(all[2]!.occurredAt)) });
      assert.ok(!untilLast.some((e) => e.id === all[2]!.id), 'until is not exclusive');
      assert.deepEqual(await store.listAudit({ until: new Date(Date.parse(all[0]!.occurredAt) - 1000) }), []);
    });

    test('filters by actor and by action, exactly, alone, together and with the other filters, paging back in time', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const admin = { actor: 'admin:3kTqv9ZbW2aX', requestId: 'r', address: '127.0.0.1' };
      const other = { actor: 'admin:3kTqv9ZbW2aY', requestId: 'r', address: '127.0.0.1' };
      await store.createAccount(account('ann'), admin);
      await store.createAccount(account('ben'), CLI);
      await store.setPremium('ann', true, other);
      await sleep(5); // so cat's entries are later than ann's to the millisecond, for `since`
      await store.createAccount(account('cat'), admin);
      await store.setPremium('cat', true, admin);
      const pick = (entries: { username: string | null; action: string }[]) => entries.map((e) => `${e.username} ${e.action}`);
      assert.deepEqual(pick(await store.listAudit({ actor: 'admin:3kTqv9ZbW2aX' })), [
        'ann account.created',
        'cat account.created',
        'cat account.premium_changed',
      ]);
      assert.deepEqual(pick(await store.listAudit({ actor: 'cli:operator' })), ['ben account.created']);
      assert.deepEqual(await store.listAudit({ actor: 'ADMIN:3kTqv9ZbW2aX' }), [], 'the actor is matched ignoring case');
      assert.deepEqual(await store.listAudit({ actor: 'admin:3kTqv9ZbW2a' }), [], 'the actor is matched as a prefix');
      assert.deepEqual(pick(await store.listAudit({ action: 'account.premium_changed' })), [
        'ann account.premium_changed',
        'cat account.premium_changed',
      ]);
      assert.deepEqual(pick(await store.listAudit({ action: 'account.created', actor: 'admin:3kTqv9ZbW2aX' })), [
        'ann account.created',
        'cat account.created',
      ]);
      assert.deepEqual(pick(await store.listAudit({ action: 'account.premium_changed', username: 'ANN' })), ['ann account.premium_changed']);
      assert.deepEqual(await store.listAudit({ action: 'key.created' }), []);
      const newest = await store.listAudit({ actor: 'admin:3kTqv9ZbW2aX', limit: 1 });
      assert.deepEqual(pick(newest), ['cat account.premium_changed']);
      const before = await store.listAudit({ actor: 'admin:3kTqv9ZbW2aX', beforeId: newest[0]!.id, limit: 1 });
      assert.deepEqual(pick(before), ['cat account.created'], 'the cursor skipped an entry of the actor or took another');
      const since = new Date(Date.parse(before[0]!.occurredAt));
      assert.deepEqual(pick(await store.listAudit({ action: 'account.created', since })), ['cat account.created']);
    });
  });
}
