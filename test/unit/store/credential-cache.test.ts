// The credential cache's own bookkeeping: bounded, and forgetting exactly what it is told to.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CredentialCache } from '../../../src/store/credentials/credential-cache.ts';
import type { Account, Credential } from '../../../src/store/store.ts';

function account(id: number, name = `user ${id}`): Account {
  return { id, username: `user${id}`, name, timezone: 'UTC', premium: true, createdAt: '2026-01-01T00:00:00.000Z' };
}

function credential(keyId: string, owner: Account, revoked = false): Credential {
  return { keyId, hash: new Uint8Array(32), revoked, scope: 'write', expiresAtMs: null, account: owner };
}

test('holds at most maxEntries keys, dropping the oldest first', () => {
  const cache = new CredentialCache(3);
  for (let i = 1; i <= 5; i++) cache.set(credential(`key${i}`, account(i)));
  assert.equal(cache.size, 3);
  assert.equal(cache.get('key1'), undefined, 'the oldest entry was kept past the bound');
  assert.equal(cache.get('key2'), undefined);
  assert.equal(cache.get('key5')?.account.id, 5);
});

test('size 0 caches nothing', () => {
  const cache = new CredentialCache(0);
  assert.equal(cache.enabled, false);
  assert.equal(new CredentialCache(1).enabled, true);
  cache.set(credential('key1', account(1)));
  assert.equal(cache.get('key1'), undefined);
  assert.equal(cache.size, 0);
});

test('accountChanged updates every key of that account, and only cached accounts', () => {
  const cache = new CredentialCache(10);
  const owner = account(1, 'Before');
  cache.set(credential('keyA', owner));
  cache.set(credential('keyB', owner));
  cache.accountChanged(account(1, 'After'));
  assert.equal(cache.get('keyA')?.account.name, 'After');
  assert.equal(cache.get('keyB')?.account.name, 'After');
  cache.accountChanged(account(2, 'Stranger'));
  assert.equal(cache.size, 2, 'an account that was not cached was added');
});

test('keyChanged and clear forget', () => {
  const cache = new CredentialCache(10);
  cache.set(credential('keyA', account(1)));
  cache.set(credential('keyB', account(2)));
  cache.keyChanged('keyA');
  assert.equal(cache.get('keyA'), undefined);
  assert.equal(cache.get('keyB')?.keyId, 'keyB');
  cache.clear();
  assert.equal(cache.get('keyB'), undefined);
});

test('a key whose account was dropped by the bound is a miss, never a wrong owner', () => {
  const cache = new CredentialCache(2);
  cache.set(credential('keyA', account(1)));
  cache.set(credential('keyB', account(2)));
  cache.set(credential('keyC', account(3))); // the account map reaches its bound and starts again
  const hit = cache.get('keyB');
  assert.ok(hit === undefined || hit.account.id === 2);
  assert.equal(cache.get('keyC')?.account.id, 3);
});
