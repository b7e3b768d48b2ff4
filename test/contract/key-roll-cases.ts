// The store contract for rolling a key once: a second roll, or one racing the first, is refused; the successor keeps the original's lifetime.
import assert from 'node:assert/strict';

import { issueKey } from '../../src/domain/api-keys.ts';
import type { ApiKeyRecord, AuditActor, NewApiKey, Store } from '../../src/store/store.ts';
import { requiring } from '../support/requiring.ts';
import { account, domainCode, freshStore, newKey, type MakeStore } from './contract-support.ts';

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
  const { describe, test } = requiring(skip);

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
