// The store contract for admin tokens and account paging (the admin API's needs), on every engine.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';
import { issueAdminToken } from '../../src/domain/admin-tokens.ts';
import { keyMatches } from '../../src/domain/api-keys.ts';
import type { NewAdminToken } from '../../src/store/store.ts';
import { account, domainCode, freshStore, isDate, type MakeStore } from './contract-support.ts';

function newAdminToken(label = 'billing'): NewAdminToken & { token: string } {
  const issued = issueAdminToken();
  return { tokenId: issued.tokenId, hash: issued.hash, displayPrefix: issued.displayPrefix, label, createdBy: 'cli:ops', token: issued.token };
}

export function defineAdminTokenCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: admin tokens`, () => {
    test('a created token is listed without its secret and found by id with its hash', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const token = newAdminToken();
      const created = await store.createAdminToken(token);
      assert.equal(created.tokenId, token.tokenId);
      assert.equal(created.label, 'billing');
      assert.equal(created.createdBy, 'cli:ops');
      assert.ok(isDate(created.createdAt));
      assert.equal(created.lastUsedAt, null);
      assert.equal(created.revokedAt, null);
      assert.deepEqual(await store.listAdminTokens(), [created]);
      const found = await store.findAdminToken(token.tokenId);
      assert.ok(found !== null && keyMatches(token.token, found.hash), 'the stored hash does not match the token');
      assert.equal(found.revoked, false);
      assert.equal(await store.findAdminToken('000000000000'), null);
    });

    test('the same token id twice is admin_token_exists', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const token = newAdminToken();
      await store.createAdminToken(token);
      await assert.rejects(store.createAdminToken(token), domainCode('admin_token_exists', 'conflict'));
    });

    test('revoking stamps the time once and is seen by the next find; an unknown id is admin_token_not_found', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const token = newAdminToken();
      await store.createAdminToken(token);
      const first = await store.revokeAdminToken(token.tokenId);
      assert.ok(first.revokedAt !== null && isDate(first.revokedAt));
      const again = await store.revokeAdminToken(token.tokenId);
      assert.equal(again.revokedAt, first.revokedAt, 'revoking twice moved the revocation time');
      assert.equal((await store.findAdminToken(token.tokenId))?.revoked, true);
      await assert.rejects(store.revokeAdminToken('000000000000'), domainCode('admin_token_not_found', 'not_found'));
    });

    test('with an actor, creating and revoking each write their audit entry; revoking again writes none', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const actor = { actor: 'cli:ops', requestId: null, address: null };
      const token = newAdminToken();
      await store.createAdminToken(token, actor);
      await store.revokeAdminToken(token.tokenId, actor);
      await store.revokeAdminToken(token.tokenId, actor);
      const entries = await store.listAudit();
      assert.deepEqual(
        entries.map((entry) => [entry.action, entry.actor, entry.changes.token_id?.new]),
        [
          ['admin_token.created', 'cli:ops', token.tokenId],
          ['admin_token.revoked', 'cli:ops', token.tokenId],
        ],
      );
      assert.ok(!JSON.stringify(entries).includes(token.token), 'an audit entry holds the token itself');
    });

    test('touching records the last use', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const token = newAdminToken();
      await store.createAdminToken(token);
      await store.touchAdminToken(token.tokenId, new Date('2026-01-02T03:04:05.000Z'));
      assert.equal((await store.listAdminTokens())[0]?.lastUsedAt, '2026-01-02T03:04:05.000Z');
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
  });
}
