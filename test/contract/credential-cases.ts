// Contract cases for credentials: whatever an engine keeps in memory (SQLite does), no write may be missed, not even briefly,
// whether this instance made it or another one did.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';

import { issueKey } from '../../src/domain/api-keys.ts';
import type { Store } from '../../src/store/store.ts';
import { account, freshStore, newKey, type MakeStore } from './contract-support.ts';

export function defineCredentialCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: credentials after writes, with no delay`, () => {
    async function cachedOwner(store: Store, username: string) {
      await store.createAccount(account(username, { premium: true, name: 'Before' }));
      const key = issueKey('live');
      await store.createKey(username, newKey(key));
      // Read twice, so whatever an engine caches is cached before the write.
      await store.findCredential(key.keyId);
      assert.equal((await store.findCredential(key.keyId))?.account.name, 'Before');
      return key;
    }

    test('a key revoked by another instance is refused by this one at once', async (t) => {
      const subject = await freshStore(t, makeStore);
      const key = await cachedOwner(subject.store, 'rita');
      await subject.openAnother().revokeKey(key.keyId);
      assert.equal((await subject.store.findCredential(key.keyId))?.revoked, true, 'the revoked key still looked valid');
    });

    test('an account deleted by another instance is gone for this one at once', async (t) => {
      const subject = await freshStore(t, makeStore);
      const key = await cachedOwner(subject.store, 'sam');
      await subject.openAnother().deleteAccount('sam');
      assert.equal(await subject.store.findCredential(key.keyId), null, 'the deleted account still authenticated');
    });

    test('name, timezone and Premium changed by another instance are read by this one at once', async (t) => {
      const subject = await freshStore(t, makeStore);
      const key = await cachedOwner(subject.store, 'tess');
      const other = subject.openAnother();
      const owner = (await other.findAccount('tess'))!;
      await other.updateName(owner.id, 'After');
      assert.equal((await subject.store.findCredential(key.keyId))?.account.name, 'After');
      await other.updateTimezone(owner.id, 'Europe/Paris');
      assert.equal((await subject.store.findCredential(key.keyId))?.account.timezone, 'Europe/Paris');
      await other.setPremium('tess', false);
      assert.equal((await subject.store.findCredential(key.keyId))?.account.premium, false, 'Premium removed elsewhere still held');
    });

    test("this instance's own writes are read back at once", async (t) => {
      const { store } = await freshStore(t, makeStore);
      const key = await cachedOwner(store, 'uma');
      const owner = (await store.findAccount('uma'))!;
      await store.updateName(owner.id, 'After');
      await store.updateTimezone(owner.id, 'Asia/Tokyo');
      let credential = await store.findCredential(key.keyId);
      assert.equal(credential?.account.name, 'After');
      assert.equal(credential?.account.timezone, 'Asia/Tokyo');
      await store.setPremium('uma', false);
      assert.equal((await store.findCredential(key.keyId))?.account.premium, false);
      await store.revokeKey(key.keyId);
      credential = await store.findCredential(key.keyId);
      assert.equal(credential?.revoked, true, 'its own revocation was not seen');
      await store.deleteAccount('uma');
      assert.equal(await store.findCredential(key.keyId), null, 'its own deletion was not seen');
    });
  });
}
