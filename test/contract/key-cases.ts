// Contract cases for keys: creation, listing, the credential a key authenticates with, revocation, last use, scope, expiry
// and the limit on active keys. Rolling a key is in key-roll-cases.ts.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { requiring } from '../support/requiring.ts';

import { issueKey, keyMatches } from '../../src/domain/api-keys.ts';
import { MAX_ACTIVE_KEYS, type AuditActor } from '../../src/store/store.ts';
import { account, domainCode, freshStore, isDate, newKey, scopedKey, withOwner, type MakeStore } from './contract-support.ts';

const CLI: AuditActor = { actor: 'cli:operator', requestId: null, address: null };
const DAY = 86_400_000;

export function defineKeyCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: keys`, () => {
    test("createKey returns the record and listKeys lists the account's keys", async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('heidi'));
      await store.createAccount(account('ivan'));
      const first = issueKey('live');
      const second = issueKey('live');
      const other = issueKey('live');
      const record = await store.createKey('heidi', newKey(first, 'laptop'));
      assert.equal(record.keyId, first.keyId);
      assert.equal(record.username, 'heidi');
      assert.equal(record.label, 'laptop');
      assert.equal(record.displayPrefix, first.displayPrefix);
      assert.equal(record.lastUsedAt, null);
      assert.equal(record.revokedAt, null);
      assert.ok(isDate(record.createdAt), `createdAt '${record.createdAt}' is not a date`);
      await store.createKey('HEIDI', newKey(second));
      await store.createKey('ivan', newKey(other));
      const listed = await store.listKeys('heidi');
      assert.deepEqual(listed.map((key) => key.keyId).sort(), [first.keyId, second.keyId].sort(), 'listKeys returned the wrong keys');
      assert.equal(listed.find((key) => key.keyId === second.keyId)?.label, null);
    });

    test('listKeys of an account without keys is empty', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('olivia'));
      assert.deepEqual(await store.listKeys('OLIVIA'), []);
    });

    test('createKey with an id already in use fails with key_exists and keeps the first key', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('peggy'));
      await store.createAccount(account('quinn'));
      const key = issueKey('live');
      await store.createKey('peggy', newKey(key, 'first'));
      await assert.rejects(store.createKey('quinn', newKey(key, 'second')), domainCode('key_exists', 'conflict'));
      const credential = await store.findCredential(key.keyId);
      assert.equal(credential?.account.username, 'peggy', 'the refused key replaced the first one');
      assert.deepEqual(await store.listKeys('quinn'), [], 'the refused key was stored anyway');
    });

    test('findCredential returns the stored hash, the state and the owner', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('judy', { premium: true, name: 'Judy' }));
      const key = issueKey('live');
      await store.createKey('judy', newKey(key));
      const credential = await store.findCredential(key.keyId);
      assert.ok(credential !== null, 'the credential was not found');
      assert.equal(credential.keyId, key.keyId);
      assert.equal(credential.revoked, false);
      assert.deepEqual(credential.account, owner);
      assert.ok(Buffer.from(credential.hash).equals(Buffer.from(key.hash)), 'the stored hash differs from the issued one');
      assert.equal(keyMatches(key.token, credential.hash), true, 'the issued key does not match its stored hash');
      assert.equal(await store.findCredential('AAAAAAAAAAAA'), null, 'an unknown key id was found');
    });

    test('revokeKey sets revoked_at and a second revoke keeps the first time', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('ken'));
      const key = issueKey('live');
      await store.createKey('ken', newKey(key));
      const revoked = await store.revokeKey(key.keyId);
      assert.ok(revoked.revokedAt !== null, 'revokedAt was not set');
      assert.ok(isDate(revoked.revokedAt), `revokedAt '${revoked.revokedAt}' is not a date`);
      assert.equal(revoked.username, 'ken');
      assert.equal((await store.findCredential(key.keyId))?.revoked, true, 'findCredential does not show the key as revoked');
      await sleep(5); // so that a second timestamp would differ from the first
      const again = await store.revokeKey(key.keyId);
      assert.equal(again.revokedAt, revoked.revokedAt, 'revoking again moved the revocation time');
      assert.equal((await store.listKeys('ken'))[0]?.revokedAt, revoked.revokedAt);
    });

    test('revokeKey of an unknown key fails with key_not_found', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await assert.rejects(store.revokeKey('AAAAAAAAAAAA'), domainCode('key_not_found', 'not_found'));
    });

    test('touchKey records when the key was last used', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('liam'));
      const key = issueKey('live');
      await store.createKey('liam', newKey(key));
      const usedAt = new Date('2031-02-03T04:05:06.789Z');
      await store.touchKey(key.keyId, usedAt);
      const listed = (await store.listKeys('liam'))[0];
      assert.ok(listed?.lastUsedAt != null, 'lastUsedAt was not set');
      assert.equal(Date.parse(listed.lastUsedAt), usedAt.getTime(), `lastUsedAt is ${listed.lastUsedAt}`);
    });

    test('deleteAccount removes its keys', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('mallory'));
      const key = issueKey('live');
      await store.createKey('mallory', newKey(key));
      await store.deleteAccount('MALLORY');
      assert.equal(await store.findAccount('mallory'), null, 'the account survived deletion');
      assert.equal(await store.findCredential(key.keyId), null, 'the key of a deleted account still authenticates');
      await assert.rejects(store.revokeKey(key.keyId), domainCode('key_not_found'), 'the key of a deleted account still exists');
    });
  });

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
}
