// The store contract for admin tokens (the admin API's credentials), on every engine.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';
import { issueAdminToken } from '../../src/domain/admin-tokens.ts';
import { keyMatches } from '../../src/domain/api-keys.ts';
import type { NewAdminToken } from '../../src/store/store.ts';
import { domainCode, freshStore, isDate, type MakeStore } from './contract-support.ts';

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
}
