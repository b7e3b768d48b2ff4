// Contract cases for accounts: creation, unique names ignoring case, ids never reused, finding, changing, paging, and an
// account made with its first key in one go.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';

import { issueKey } from '../../src/domain/api-keys.ts';
import { account, domainCode, freshStore, isDate, newKey, type MakeStore } from './contract-support.ts';

export function defineAccountCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
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
      assert.equal(await store.hasAccounts(), true);
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
      assert.equal(await subject.store.hasAccounts(), false, 'an emptied table still has accounts');
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

  describe(`${engineName} store: accounts made with their key`, () => {
    test('createAccountWithKey stores both, and the key opens the account', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const key = issueKey('sandbox');
      const created = await store.createAccountWithKey(account('paired', { premium: true }), newKey(key, 'seeded'));
      assert.equal(created.username, 'paired');
      assert.equal(created.premium, true);
      assert.deepEqual((await store.findCredential(key.keyId))?.account, created);
      assert.deepEqual((await store.listKeys('paired')).map((record) => record.label), ['seeded']);
    });

    test('createAccountWithKey stores neither when the name is taken, nor when the key id is', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('Taken'));
      const key = issueKey('sandbox');
      await assert.rejects(store.createAccountWithKey(account('taken'), newKey(key)), domainCode('username_taken', 'conflict'));
      assert.equal(await store.findCredential(key.keyId), null, 'the key was stored without its account');

      const used = issueKey('sandbox');
      await store.createKey('Taken', newKey(used));
      await assert.rejects(store.createAccountWithKey(account('fresh'), newKey(used)), domainCode('key_exists', 'conflict'));
      assert.equal(await store.findAccount('fresh'), null, 'the account was stored without its key');
      assert.equal(await store.countAccounts(), 1);
    });

    test('updatePremium changes the account with that id only, and fails once it is deleted', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const first = await store.createAccount(account('pat'));
      assert.equal((await store.updatePremium(first.id, true)).premium, true);
      assert.equal((await store.findAccount('pat'))?.premium, true);
      await store.deleteAccount('pat');
      await store.createAccount(account('pat'));
      await assert.rejects(store.updatePremium(first.id, false), domainCode('account_not_found', 'not_found'));
      assert.equal((await store.findAccount('pat'))?.premium, false, 'the new account of the same name was changed');
    });
  });

  describe(`${engineName} store: account pages`, () => {
    test('pages accounts by id after a given one, at most limit at a time', async (t) => {
      const { store } = await freshStore(t, makeStore);
      for (const name of ['ann', 'ben', 'cat', 'dan', 'eve']) await store.createAccount(account(name));
      const first = await store.pageAccounts(null, 2);
      assert.deepEqual(first.map((a) => a.username), ['ann', 'ben']);
      const second = await store.pageAccounts(first.at(-1)!.id, 2);
      assert.deepEqual(second.map((a) => a.username), ['cat', 'dan']);
      const last = await store.pageAccounts(second.at(-1)!.id, 2);
      assert.deepEqual(last.map((a) => a.username), ['eve']);
      assert.deepEqual(await store.pageAccounts(last[0]!.id, 2), []);
    });

    test('pages only the accounts whose username starts with a prefix, ignoring case, by the same cursor', async (t) => {
      const { store } = await freshStore(t, makeStore);
      for (const name of ['alice', 'Alina', 'bob', 'ALIBABA', 'malik', 'al', 'alison']) await store.createAccount(account(name));
      const names = (accounts: { username: string }[]) => accounts.map((a) => a.username);
      assert.deepEqual(names(await store.pageAccounts(null, 10, 'ALI')), ['alice', 'Alina', 'ALIBABA', 'alison'], 'ALI finds alice');
      assert.deepEqual(names(await store.pageAccounts(null, 10, 'ali')), ['alice', 'Alina', 'ALIBABA', 'alison']);
      const first = await store.pageAccounts(null, 2, 'ali');
      assert.deepEqual(names(first), ['alice', 'Alina']);
      const second = await store.pageAccounts(first.at(-1)!.id, 2, 'ali');
      assert.deepEqual(names(second), ['ALIBABA', 'alison'], 'the second page skipped or repeated a match, or took bob or malik');
      assert.deepEqual(await store.pageAccounts(second.at(-1)!.id, 2, 'ali'), []);
      assert.deepEqual(names(await store.pageAccounts(null, 10, 'alice')), ['alice'], 'a whole username is its own prefix');
      assert.deepEqual(await store.pageAccounts(null, 10, 'alicex'), []);
      assert.deepEqual(await store.pageAccounts(null, 10, 'lik'), [], 'matched inside the username, not at its start');
    });

    test("a prefix's '_' and '.' match only themselves, never any character", async (t) => {
      const { store } = await freshStore(t, makeStore);
      for (const name of ['abc', 'a_c', 'a.c', 'a-c', 'A_D', 'x']) await store.createAccount(account(name));
      const names = async (prefix: string) => (await store.pageAccounts(null, 10, prefix)).map((a) => a.username);
      assert.deepEqual(await names('a_'), ['a_c', 'A_D'], "'a_' matched abc: '_' was taken as a wildcard");
      assert.deepEqual(await names('a_c'), ['a_c']);
      assert.deepEqual(await names('a.'), ['a.c']);
      assert.deepEqual(await names('a-'), ['a-c']);
      assert.deepEqual(await names('_'), []);
      assert.deepEqual(await names('a'), ['abc', 'a_c', 'a.c', 'a-c', 'A_D']);
    });
  });
}
