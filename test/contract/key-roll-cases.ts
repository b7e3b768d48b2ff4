// Contract cases for rolling a key: the successor keeps owner, label, scope and lifetime; the old key expires when the
// overlap ends; a key is rolled once, and a second roll, or one racing the first, is refused.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

import { issueKey } from '../../src/domain/api-keys.ts';
import { MAX_ACTIVE_KEYS, type ApiKeyRecord, type AuditActor, type NewApiKey, type Store } from '../../src/store/store.ts';
import { requiring } from '../support/requiring.ts';
import { account, domainCode, freshStore, newKey, scopedKey, withOwner, type MakeStore } from './contract-support.ts';

const CLI: AuditActor = { actor: 'cli:operator', requestId: null, address: null };
const DAY = 86_400_000;

function expiringKey(expiresAt: Date | null): NewApiKey {
  return { ...newKey(issueKey('live'), 'ci'), scope: 'read', expiresAt };
}

/** Neither revoked nor expired, by the caller's clock. */
function live(key: ApiKeyRecord): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > Date.now());
}

function lifetimeOf(key: ApiKeyRecord): number | null {
  return key.expiresAt === null ? null : Date.parse(key.expiresAt) - Date.parse(key.createdAt);
}

/** A refusal with key_already_rolled whose message names the successor (and says more, when given). */
function alreadyRolledInto(successorId: string, more?: RegExp) {
  return (error: unknown) => {
    domainCode('key_already_rolled', 'conflict')(error);
    const message = (error as Error).message;
    assert.ok(message.includes(`'${successorId}'`), `the refusal should name the successor ${successorId}: ${message}`);
    if (more !== undefined) assert.match(message, more);
    return true;
  };
}

async function rolls(store: Store): Promise<number> {
  return (await store.listAudit()).filter((entry) => entry.action === 'key.rolled').length;
}
export function defineKeyRollCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
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

  describe(`${engineName} store: a key is rolled once`, () => {
    test('a second roll is refused with key_already_rolled naming the successor, and changes nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      const original = await store.createKey('alice', expiringKey(null));
      const first = await store.rollKey(original.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI);
      const before = await store.listKeys('alice');
      const second = newKey(issueKey('live'));
      await assert.rejects(
        store.rollKey(original.keyId, second, new Date(Date.now() + 2 * DAY), CLI),
        alreadyRolledInto(first.successor.keyId, /roll '\w+' to replace it/),
      );
      assert.deepEqual(await store.listKeys('alice'), before, 'a refused roll changed a key or issued one');
      assert.equal(await store.findCredential(second.keyId), null, 'the refused successor works');
      assert.equal(await rolls(store), 1, 'a refused roll was audited');
    });

    test('a key rolled with no overlap, or whose successor was revoked, is still refused as already rolled', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      // With no overlap the old key is expired at once: the answer is still the roll it had, naming its successor.
      const stopped = await store.createKey('alice', expiringKey(null));
      const rolledAtOnce = await store.rollKey(stopped.keyId, newKey(issueKey('live')), new Date(), CLI);
      await assert.rejects(store.rollKey(stopped.keyId, newKey(issueKey('live')), new Date(), CLI), alreadyRolledInto(rolledAtOnce.successor.keyId));
      // A revoked successor does not free its predecessor (still in its overlap) to issue another credential.
      const overlapping = await store.createKey('alice', expiringKey(null));
      const rolled = await store.rollKey(overlapping.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI);
      await store.revokeKey(rolled.successor.keyId, CLI);
      await assert.rejects(
        store.rollKey(overlapping.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI),
        alreadyRolledInto(rolled.successor.keyId, /was revoked at .*create a new key instead/),
      );
      assert.equal((await store.listKeys('alice')).length, 4, 'a refused roll issued a successor');
      assert.equal(await rolls(store), 2);
    });

    test("the successor takes the original's lifetime: none for a key without expiry, the same span for one with", async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      const forever = await store.createKey('alice', expiringKey(null));
      const heir = (await store.rollKey(forever.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI)).successor;
      assert.equal(heir.expiresAt, null, 'the successor of a key without expiry expires');
      // Rolled in turn, the heir's own successor too: a lifetime is handed down, never the overlap's end.
      const grandHeir = (await store.rollKey(heir.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI)).successor;
      assert.equal(grandHeir.expiresAt, null, 'the successor of a rolled-into key without expiry expires');

      const monthly = await store.createKey('alice', expiringKey(new Date(Date.now() + 30 * DAY)));
      const next = (await store.rollKey(monthly.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI)).successor;
      assert.equal(lifetimeOf(next), lifetimeOf(monthly), `the successor should live ${lifetimeOf(monthly)} ms like the original, not ${lifetimeOf(next)}`);
      const after = (await store.rollKey(next.keyId, newKey(issueKey('live')), new Date(Date.now() + DAY), CLI)).successor;
      assert.equal(lifetimeOf(after), lifetimeOf(monthly), 'the second generation lost the lifetime');
    });

    test('8 rolls at once through two stores: exactly one wins; the others are refused naming its successor', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      await subject.store.createAccount(account('alice'));
      const original = await subject.store.createKey('alice', expiringKey(null));
      const successors = Array.from({ length: 8 }, () => newKey(issueKey('live')));
      const outcomes = await Promise.allSettled(
        successors.map((successor, index) => stores[index % 2]!.rollKey(original.keyId, successor, new Date(Date.now() + DAY), CLI)),
      );
      const won = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      assert.equal(won.length, 1, `${won.length} of 8 concurrent rolls succeeded`);
      const winner = won[0]!.successor.keyId;
      for (const outcome of outcomes) if (outcome.status === 'rejected') alreadyRolledInto(winner)(outcome.reason);
      const keys = await subject.store.listKeys('alice');
      assert.deepEqual(keys.filter(live).map((k) => k.keyId).sort(), [original.keyId, winner].sort(), 'live keys other than the original and one successor');
      assert.equal(keys.find((k) => k.keyId === original.keyId)?.rolledInto, winner);
      for (const successor of successors) {
        if (successor.keyId !== winner) assert.equal(await subject.store.findCredential(successor.keyId), null, 'a losing successor works');
      }
      assert.equal(await rolls(subject.store), 1, 'every roll was audited, not only the one that happened');
    });
  });
}
