// Contract cases for writers racing each other, through one store and through two (as two instances would).
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';

import { issueKey } from '../../src/domain/api-keys.ts';
import type { Account, Store } from '../../src/store/store.ts';
import { account, domainCode, freshStore, newKey, type MakeStore } from './contract-support.ts';

const TIMEZONES = [
  'Europe/Paris', 'Asia/Tokyo', 'America/New_York', 'Australia/Sydney', 'Africa/Lagos', 'America/Sao_Paulo',
  'Asia/Kolkata', 'Europe/Berlin', 'Pacific/Auckland', 'America/Los_Angeles', 'Asia/Singapore', 'Europe/London',
  'America/Chicago', 'Asia/Dubai', 'Europe/Madrid', 'Africa/Cairo', 'Asia/Seoul', 'America/Mexico_City',
  'Europe/Rome', 'Asia/Jakarta',
];

/** Alternates calls between the stores, so that with two of them half the writes come from "another instance". */
function spread<T>(stores: readonly Store[], count: number, call: (store: Store, index: number) => Promise<T>): Promise<T>[] {
  return Array.from({ length: count }, (_, index) => call(stores[index % stores.length]!, index));
}

function withoutChangingFields(account: Account): Omit<Account, 'name' | 'timezone'> {
  const { name: _name, timezone: _timezone, ...rest } = account;
  return rest;
}

export function defineConcurrencyCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: concurrent writers`, () => {
    test('parallel name and timezone updates never produce a record that no call wrote', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      const created = await subject.store.createAccount(account('racer', { name: 'start', timezone: 'UTC' }));
      const names = TIMEZONES.map((_, index) => `name ${index}`);
      const nameCalls = spread(stores, names.length, (store, index) => store.updateName(created.id, names[index]!));
      const zoneCalls = spread(stores, TIMEZONES.length, (store, index) => store.updateTimezone(created.id, TIMEZONES[index]!));
      const [byName, byZone] = await Promise.all([Promise.all(nameCalls), Promise.all(zoneCalls)]);

      const possibleNames = new Set(['start', ...names]);
      const possibleZones = new Set(['UTC', ...TIMEZONES]);
      byName.forEach((result, index) => {
        assert.equal(result.name, names[index], `updateName #${index} returned another call's name`);
        assert.ok(possibleZones.has(result.timezone), `updateName #${index} returned a timezone nobody wrote: ${result.timezone}`);
        assert.deepEqual(withoutChangingFields(result), withoutChangingFields(created), `updateName #${index} changed other fields`);
      });
      byZone.forEach((result, index) => {
        assert.equal(result.timezone, TIMEZONES[index], `updateTimezone #${index} returned another call's timezone`);
        assert.ok(possibleNames.has(result.name), `updateTimezone #${index} returned a name nobody wrote: ${result.name}`);
        assert.deepEqual(withoutChangingFields(result), withoutChangingFields(created), `updateTimezone #${index} changed other fields`);
      });
      const final = await subject.store.findAccount('racer');
      assert.ok(final !== null);
      assert.ok(names.includes(final.name), `the final name '${final.name}' is not one that a call wrote`);
      assert.ok(TIMEZONES.includes(final.timezone), `the final timezone '${final.timezone}' is not one that a call wrote`);
    });

    test('a single name update racing many timezone updates is never lost, nor the reverse', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      const created = await subject.store.createAccount(account('loner', { name: 'start', timezone: 'UTC' }));
      // A store that read the whole row and wrote it back would undo the one write of the other column.
      const half = TIMEZONES.length / 2;
      await Promise.all([
        ...spread(stores, half, (store, index) => store.updateTimezone(created.id, TIMEZONES[index]!)),
        subject.store.updateName(created.id, 'the only name'),
        ...spread(stores, half, (store, index) => store.updateTimezone(created.id, TIMEZONES[half + index]!)),
      ]);
      assert.equal((await subject.store.findAccount('loner'))?.name, 'the only name', 'a timezone update overwrote the name');
      await Promise.all([
        ...spread(stores, half, (store, index) => store.updateName(created.id, `name ${index}`)),
        subject.store.updateTimezone(created.id, 'Antarctica/Troll'),
        ...spread(stores, half, (store, index) => store.updateName(created.id, `name ${half + index}`)),
      ]);
      assert.equal((await subject.store.findAccount('loner'))?.timezone, 'Antarctica/Troll', 'a name update overwrote the timezone');
    });

    test('50 parallel createAccount calls get 50 distinct ids', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      const created = await Promise.all(spread(stores, 50, (store, index) => store.createAccount(account(`user${index}`))));
      const ids = created.map((a) => a.id);
      assert.equal(new Set(ids).size, 50, `ids were handed out twice: ${ids.join(', ')}`);
      assert.ok(ids.every((id) => Number.isSafeInteger(id) && id > 0), `not every id is a positive integer: ${ids.join(', ')}`);
      assert.equal(await subject.store.countAccounts(), 50);
      assert.deepEqual(
        (await subject.store.listAccounts()).map((a) => a.id),
        [...ids].sort((a, b) => a - b),
        'the stored ids differ from the returned ones',
      );
    });

    test('parallel creates of one username in different cases let exactly one through', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      const spellings = ['sam', 'Sam', 'SAM', 'sAm', 'saM', 'SaM', 'sAM', 'SAm'];
      const results = await Promise.allSettled(spread(stores, spellings.length, (store, index) => store.createAccount(account(spellings[index]!))));
      const fulfilled = results.filter((result) => result.status === 'fulfilled');
      assert.equal(fulfilled.length, 1, `${fulfilled.length} of the spellings were created`);
      for (const result of results) {
        if (result.status === 'rejected') domainCode('username_taken', 'conflict')(result.reason);
      }
      assert.equal(await subject.store.countAccounts(), 1);
    });

    test('keys created while their account is deleted never outlive it', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      await subject.store.createAccount(account('trent'));
      const keys = Array.from({ length: 10 }, () => issueKey('live'));
      const results = await Promise.allSettled([
        ...spread(stores, 5, (store, index) => store.createKey('trent', newKey(keys[index]!))),
        subject.store.deleteAccount('trent'),
        ...spread(stores, 5, (store, index) => store.createKey('trent', newKey(keys[5 + index]!))),
      ]);
      assert.equal(results[5]?.status, 'fulfilled', 'deleteAccount failed while keys were being created');
      for (const result of results) {
        if (result.status === 'rejected') domainCode('account_not_found', 'not_found')(result.reason);
      }
      for (const key of keys) {
        assert.equal(await subject.store.findCredential(key.keyId), null, `key ${key.keyId} survived its account`);
      }
    });
  });
}
