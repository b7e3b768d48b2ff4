// The store contract: what every engine must do, run as one suite against SQLite and PostgreSQL alike.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';
import { setTimeout as sleep } from 'node:timers/promises';

import { issueKey, keyMatches } from '../../src/domain/api-keys.ts';
import { defineConcurrencyCases } from './concurrency-cases.ts';
import { defineEnvironmentCases } from './environment-cases.ts';
import { defineIdempotencyCases } from './idempotency-cases.ts';
import { defineAdminTokenCases } from './admin-token-cases.ts';
import { defineKeyLifecycleCases } from './key-lifecycle-cases.ts';
import { defineKeyRollCases } from './key-roll-cases.ts';
import { defineWebhookCases } from './webhook-cases.ts';
import type { Store } from '../../src/store/store.ts';
import { account, domainCode, freshStore, isDate, newKey, type MakeStore } from './contract-support.ts';

export type { MakeStore, StoreUnderTest } from './contract-support.ts';

export function defineStoreContract(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: migrations`, () => {
    test('migrate applies every migration once; a second run applies nothing', async (t) => {
      const { store } = await freshStore(t, makeStore, { migrated: false });
      const first = await store.migrate();
      assert.ok(first.applied.length > 0, 'the first migrate applied nothing');
      assert.deepEqual(first.applied, [...first.applied].sort((a, b) => a - b), 'migrations were not applied in order');
      assert.equal(first.applied.at(-1), first.current, 'the report does not end at the current version');
      const second = await store.migrate();
      assert.deepEqual(second.applied, [], 'the second migrate applied migrations again');
      assert.equal(second.current, first.current);
    });

    test('records each applied migration in schema_migrations', async (t) => {
      const subject = await freshStore(t, makeStore);
      const report = await subject.store.migrate();
      const rows = await subject.migrationRows();
      assert.deepEqual(
        rows.map((row) => row.version),
        Array.from({ length: report.current }, (_, index) => index + 1),
        'one row per migration expected',
      );
      for (const row of rows) {
        assert.match(row.name, /^[a-z0-9_]+$/);
        assert.ok(isDate(row.appliedAt), `applied_at '${row.appliedAt}' is not a date`);
      }
    });

    test('checkSchema fails with schema_outdated before migrate and passes after it', async (t) => {
      const { store } = await freshStore(t, makeStore, { migrated: false });
      await assert.rejects(store.checkSchema(), domainCode('schema_outdated', 'internal'), 'checkSchema passed on an empty database');
      await store.migrate();
      await store.checkSchema();
    });

    test('a schema version newer than the code makes migrate and checkSchema fail with schema_too_new', async (t) => {
      const subject = await freshStore(t, makeStore);
      await subject.recordMigration(999, 'from_the_future');
      const before = await subject.migrationRows();
      await assert.rejects(subject.store.migrate(), domainCode('schema_too_new', 'internal'), 'migrate ran on a newer schema');
      await assert.rejects(subject.store.checkSchema(), domainCode('schema_too_new'), 'checkSchema accepted a newer schema');
      const another = subject.openAnother();
      await assert.rejects(another.checkSchema(), domainCode('schema_too_new'), 'a fresh connection accepted a newer schema');
      await assert.rejects(another.checkSchema(), /newer than this build/, 'the message does not say the schema is newer');
      assert.deepEqual(await subject.migrationRows(), before, 'refusing a newer schema still changed schema_migrations');
    });
  });

  defineEnvironmentCases(engineName, makeStore, skip);
  defineKeyLifecycleCases(engineName, makeStore, skip);
  defineKeyRollCases(engineName, makeStore, skip);

  describe(`${engineName} store: accounts`, () => {
    test('createAccount returns ids 1 and 2 and the stored fields', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const first = await store.createAccount(account('alice', { name: 'Alice A.', timezone: 'Europe/Paris', premium: true }));
      const second = await store.createAccount(account('bob'));
      assert.equal(first.id, 1);
      assert.equal(second.id, 2);
      assert.equal(first.username, 'alice');
      assert.equal(first.name, 'Alice A.');
      assert.equal(first.timezone, 'Europe/Paris');
      assert.equal(first.premium, true);
      assert.equal(second.premium, false);
      assert.ok(isDate(first.createdAt), `createdAt '${first.createdAt}' is not a date`);
      assert.equal(first.createdAt, new Date(first.createdAt).toISOString(), 'createdAt is not an ISO 8601 UTC string');
      assert.equal(await store.countAccounts(), 2);
      assert.deepEqual((await store.listAccounts()).map((a) => a.username), ['alice', 'bob']);
    });

    test('usernames are unique ignoring case', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('Carol'));
      for (const username of ['Carol', 'carol', 'CAROL', 'cArOl']) {
        await assert.rejects(store.createAccount(account(username)), domainCode('username_taken', 'conflict'), `'${username}' was created twice`);
      }
      assert.equal(await store.countAccounts(), 1, 'a refused account was stored anyway');
      assert.equal((await store.findAccount('carol'))?.username, 'Carol', 'the stored spelling was not kept');
    });

    test('deleting the highest account and creating another never reuses its id', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('a1'));
      const highest = await store.createAccount(account('a2'));
      await store.deleteAccount('a2');
      const next = await store.createAccount(account('a3'));
      assert.ok(next.id > highest.id, `id ${highest.id} was reused (new id ${next.id})`);
      const again = await store.createAccount(account('a2'));
      assert.ok(again.id > next.id, 'recreating a deleted username reused an old id');
    });

    test('ids are not reused even after every account is deleted and the database reopened', async (t) => {
      const subject = await freshStore(t, makeStore);
      let highest = 0;
      for (const name of ['b1', 'b2', 'b3']) highest = (await subject.store.createAccount(account(name))).id;
      for (const name of ['b1', 'b2', 'b3']) await subject.store.deleteAccount(name);
      assert.equal(await subject.store.countAccounts(), 0);
      const reopened = subject.openAnother();
      const next = await reopened.createAccount(account('b1'));
      assert.ok(next.id > highest, `id ${next.id} was handed out again after the table was emptied (highest was ${highest})`);
    });

    test('findAccount ignores case and returns null for an unknown name', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const created = await store.createAccount(account('Dave.Smith'));
      for (const query of ['Dave.Smith', 'dave.smith', 'DAVE.SMITH']) {
        assert.deepEqual(await store.findAccount(query), created, `findAccount('${query}') did not find the account`);
      }
      assert.equal(await store.findAccount('nobody'), null);
      assert.equal(await store.findAccount('Dave.Smit'), null, 'a prefix matched');
      assert.equal(await store.findAccount('Dave_Smith'), null, 'a LIKE wildcard matched');
    });

    test('setPremium switches Premium on and off', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('erin'));
      assert.equal((await store.setPremium('erin', true)).premium, true);
      assert.equal((await store.findAccount('erin'))?.premium, true, 'Premium on was not stored');
      assert.equal((await store.setPremium('ERIN', false)).premium, false, 'setPremium should ignore case');
      assert.equal((await store.findAccount('erin'))?.premium, false, 'Premium off was not stored');
    });

    test('updateName stores the name exactly and leaves the rest unchanged', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const created = await store.createAccount(account('frank', { timezone: 'Asia/Tokyo', premium: true }));
      const name = '  Frànk 😀 山田  ';
      const updated = await store.updateName(created.id, name);
      assert.deepEqual(updated, { ...created, name }, 'updateName changed more than the name');
      assert.equal((await store.findAccount('frank'))?.name, name);
    });

    test('updateTimezone stores the timezone and leaves the rest unchanged', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const created = await store.createAccount(account('grace', { name: 'Grace' }));
      const updated = await store.updateTimezone(created.id, 'America/Argentina/Buenos_Aires');
      assert.deepEqual(updated, { ...created, timezone: 'America/Argentina/Buenos_Aires' });
      assert.equal((await store.findAccount('grace'))?.timezone, 'America/Argentina/Buenos_Aires');
    });

    test('operations on a missing account fail with account_not_found', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const notFound = domainCode('account_not_found', 'not_found');
      await assert.rejects(store.setPremium('ghost', true), notFound, 'setPremium on a missing account');
      await assert.rejects(store.deleteAccount('ghost'), notFound, 'deleteAccount on a missing account');
      await assert.rejects(store.updateName(999, 'x'), notFound, 'updateName on a missing account');
      await assert.rejects(store.updateTimezone(999, 'UTC'), notFound, 'updateTimezone on a missing account');
      await assert.rejects(store.createKey('ghost', newKey(issueKey('live'))), notFound, 'createKey on a missing account');
      await assert.rejects(store.listKeys('ghost'), notFound, 'listKeys on a missing account');
    });
  });

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

  // Engines may keep credentials in memory (SQLite does); whatever they keep, no write may be missed, not even briefly.
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

  defineConcurrencyCases(engineName, makeStore, skip);
  defineIdempotencyCases(engineName, makeStore, skip);
  defineAdminTokenCases(engineName, makeStore, skip);
  defineWebhookCases(engineName, makeStore, skip);

  describe(`${engineName} store: closing`, () => {
    test('close() twice is safe', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.close();
      await store.close();
      await assert.rejects(store.findAccount('x'), 'a closed store still answered');
    });
  });
}
