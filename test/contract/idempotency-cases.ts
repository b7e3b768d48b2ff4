// Contract cases for idempotency keys and conditional account updates: what every engine must do, through one store and two.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { HANG_MS } from '../support/eventually.ts';
import { requiring } from '../support/requiring.ts';

import { issueAdminToken } from '../../src/domain/admin-tokens.ts';
import type { Account, AuditActor, IdempotencyKeyClaim, Store, StoredAnswer } from '../../src/store/store.ts';
import { account, domainCode, freshStore, type MakeStore } from './contract-support.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The public API's actor: its entry must commit with the update, the condition and the recorded answer, or not at all. */
const KEY: AuditActor = { actor: 'key:AAAABBBBCCCC', requestId: 'req-1', address: '203.0.113.7' };

type ClaimOverrides = Partial<Pick<IdempotencyKeyClaim, 'fingerprint' | 'token' | 'leaseMs' | 'ttlMs'>>;

function claimOf(accountId: number, key: string, overrides: ClaimOverrides = {}): IdempotencyKeyClaim {
  return { accountId, key, fingerprint: 'fingerprint-a', token: randomUUID(), leaseMs: 60_000, ttlMs: DAY_MS, ...overrides };
}

/** An admin token's claim (the admin port's keys, per token). */
function adminClaimOf(adminTokenId: string, key: string, overrides: ClaimOverrides = {}): IdempotencyKeyClaim {
  return { adminTokenId, key, fingerprint: 'fingerprint-a', token: randomUUID(), leaseMs: 60_000, ttlMs: DAY_MS, ...overrides };
}

async function adminTokenIn(store: Store): Promise<string> {
  const issued = issueAdminToken();
  await store.createAdminToken({ tokenId: issued.tokenId, hash: issued.hash, displayPrefix: issued.displayPrefix, label: 'provisioning', createdBy: 'cli:ops' });
  return issued.tokenId;
}

function answerOf(text: string, status = 200): StoredAnswer {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', etag: '"e1"' }, body: Buffer.from(text) };
}

export function defineIdempotencyCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: idempotency keys`, () => {
    test('a new key is claimed; a held one is in progress with its fingerprint', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      assert.deepEqual(await store.claimIdempotencyKey(claimOf(owner.id, 'k1')), { state: 'claimed' });
      assert.deepEqual(await store.claimIdempotencyKey(claimOf(owner.id, 'k1', { fingerprint: 'fingerprint-b' })), {
        state: 'in_progress',
        fingerprint: 'fingerprint-a',
      });
    });

    test('keys are per account: the same key of another account is its own', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const alice = await store.createAccount(account('alice'));
      const bob = await store.createAccount(account('bob'));
      assert.equal((await store.claimIdempotencyKey(claimOf(alice.id, 'shared'))).state, 'claimed');
      assert.equal((await store.claimIdempotencyKey(claimOf(bob.id, 'shared'))).state, 'claimed');
    });

    test('a completed key gives back its answer byte for byte, with its headers and fingerprint', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      const claim = claimOf(owner.id, 'k1');
      await store.claimIdempotencyKey(claim);
      const body = Buffer.from('{"status":"fail","name":"Zoë 🦊"}');
      assert.equal(await store.completeIdempotencyKey(claim, { status: 400, headers: { 'content-type': 'x/y' }, body }), true);
      const again = await store.claimIdempotencyKey(claimOf(owner.id, 'k1'));
      assert.equal(again.state, 'completed');
      assert.ok(again.state === 'completed');
      assert.equal(again.fingerprint, 'fingerprint-a');
      assert.equal(again.answer.status, 400);
      assert.deepEqual(again.answer.headers, { 'content-type': 'x/y' });
      assert.ok(Buffer.from(again.answer.body).equals(body), `the body came back as ${Buffer.from(again.answer.body).toString()}`);
    });

    test('of many concurrent claims of one key, through two stores, exactly one wins', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      const owner = await subject.store.createAccount(account('alice'));
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, index) => stores[index % 2]!.claimIdempotencyKey(claimOf(owner.id, 'race'))),
      );
      const states = outcomes.map((outcome) => outcome.state);
      assert.equal(states.filter((state) => state === 'claimed').length, 1, `claims: ${states.join(', ')}`);
      assert.equal(states.filter((state) => state === 'in_progress').length, 19, `claims: ${states.join(', ')}`);
    });

    test('a key held past its lease is taken over, and its first holder can no longer complete it', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      const first = claimOf(owner.id, 'k1', { leaseMs: 50 });
      await store.claimIdempotencyKey(first);
      await sleep(120);
      const second = claimOf(owner.id, 'k1', { fingerprint: 'fingerprint-b' });
      assert.deepEqual(await store.claimIdempotencyKey(second), { state: 'claimed' });
      assert.equal(await store.completeIdempotencyKey(first, answerOf('first')), false, 'a holder whose lease ran out completed the key');
      assert.equal(await store.completeIdempotencyKey(second, answerOf('second')), true);
    });

    test('a completed key is never taken over when its lease ends, only when it expires', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      // "Before it expires" must really be before: when a loaded machine took longer than the lifetime to get there, that
      // step proved nothing, and it is tried again, on another key, with a longer lifetime.
      for (let ttlMs = 300; ; ttlMs *= 4) {
        assert.ok(ttlMs <= HANG_MS, 'never got back to the key within its lifetime: taken for a hang');
        const key = `k-${ttlMs}`;
        const claimedFrom = Date.now();
        const claim = claimOf(owner.id, key, { leaseMs: 20, ttlMs });
        await store.claimIdempotencyKey(claim);
        await store.completeIdempotencyKey(claim, answerOf('done'));
        await sleep(60);
        const state = (await store.claimIdempotencyKey(claimOf(owner.id, key))).state;
        if (Date.now() - claimedFrom >= ttlMs) continue;
        assert.equal(state, 'completed', 'a completed key was taken over when its lease ended');
        await sleep(ttlMs);
        assert.deepEqual(await store.claimIdempotencyKey(claimOf(owner.id, key, { fingerprint: 'fingerprint-b' })), { state: 'claimed' });
        return;
      }
    });

    test('a released key is free again; releasing with another token does nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      const claim = claimOf(owner.id, 'k1');
      await store.claimIdempotencyKey(claim);
      await store.releaseIdempotencyKey({ ...claim, token: randomUUID() });
      assert.equal((await store.claimIdempotencyKey(claimOf(owner.id, 'k1'))).state, 'in_progress', 'a stranger released the key');
      await store.releaseIdempotencyKey(claim);
      assert.equal((await store.claimIdempotencyKey(claimOf(owner.id, 'k1'))).state, 'claimed');
    });

    test('pruning deletes expired keys only', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      await store.claimIdempotencyKey(claimOf(owner.id, 'short', { ttlMs: 30 }));
      await store.claimIdempotencyKey(claimOf(owner.id, 'long'));
      await sleep(80);
      assert.equal(await store.pruneIdempotencyKeys(), 1);
      assert.equal((await store.claimIdempotencyKey(claimOf(owner.id, 'long'))).state, 'in_progress', 'pruning deleted a live key');
    });

    test("an admin token's keys are its own: never an account's, nor another token's, and kept and pruned the same way", async (t) => {
      const { store } = await freshStore(t, makeStore);
      const alice = await store.createAccount(account('alice'));
      const [first, second] = [await adminTokenIn(store), await adminTokenIn(store)];
      const claim = adminClaimOf(first, 'shared');
      assert.deepEqual(await store.claimIdempotencyKey(claim), { state: 'claimed' });
      assert.equal((await store.claimIdempotencyKey(claimOf(alice.id, 'shared'))).state, 'claimed', "an account met an admin token's key");
      assert.equal((await store.claimIdempotencyKey(adminClaimOf(second, 'shared'))).state, 'claimed', "a token met another token's key");
      assert.equal(await store.completeIdempotencyKey(claim, answerOf('{"issued":1}', 201)), true);
      const again = await store.claimIdempotencyKey(adminClaimOf(first, 'shared'));
      assert.ok(again.state === 'completed', `the token's own key was ${again.state}`);
      assert.equal(again.answer.status, 201);
      assert.equal(Buffer.from(again.answer.body).toString(), '{"issued":1}');
      await store.claimIdempotencyKey(adminClaimOf(first, 'short', { ttlMs: 30 }));
      await sleep(80);
      assert.equal(await store.pruneIdempotencyKeys(), 1, "the admin token's expired key was not pruned");
      const released = adminClaimOf(second, 'released');
      await store.claimIdempotencyKey(released);
      await store.releaseIdempotencyKey(released);
      assert.equal((await store.claimIdempotencyKey(adminClaimOf(second, 'released'))).state, 'claimed');
    });

    test("deleting an account deletes its keys", async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice'));
      await store.claimIdempotencyKey(claimOf(owner.id, 'k1'));
      await store.deleteAccount('alice');
      const again = await store.createAccount(account('alice'));
      assert.equal((await store.claimIdempotencyKey(claimOf(again.id, 'k1'))).state, 'claimed');
    });
  });

  describe(`${engineName} store: updates with conditions and recorded answers`, () => {
    test('an update records its answer and its audit entry with it: the key is completed with the answer built from the new account', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice', { name: 'Alice' }));
      const claim = claimOf(owner.id, 'k1');
      await store.claimIdempotencyKey(claim);
      const updated = await store.updateName(owner.id, 'Alice L.', KEY, {
        expect: (current) => current.name === 'Alice',
        idempotency: { held: claim, answer: (account: Account) => answerOf(`name=${account.name}`) },
      });
      assert.equal(updated.name, 'Alice L.');
      const replay = await store.claimIdempotencyKey(claimOf(owner.id, 'k1'));
      assert.ok(replay.state === 'completed', `the key is ${replay.state}`);
      assert.equal(Buffer.from(replay.answer.body).toString(), 'name=Alice L.');
      const entries = await store.listAudit({ username: 'alice' });
      assert.deepEqual(
        entries.map((entry) => ({ action: entry.action, actor: entry.actor, requestId: entry.requestId, changes: entry.changes })),
        [{ action: 'account.updated', actor: KEY.actor, requestId: KEY.requestId, changes: { name: { old: 'Alice', new: 'Alice L.' } } }],
      );
    });

    test('a conditional update to the value already stored records no audit entry', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice', { timezone: 'UTC' }));
      await store.updateTimezone(owner.id, 'UTC', KEY, { expect: () => true });
      assert.deepEqual(await store.listAudit({ username: 'alice' }), []);
    });

    test('an update for a key no longer held fails with idempotency_key_in_use and writes nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice', { timezone: 'UTC' }));
      const first = claimOf(owner.id, 'k1', { leaseMs: 30 });
      await store.claimIdempotencyKey(first);
      await sleep(80);
      await store.claimIdempotencyKey(claimOf(owner.id, 'k1'));
      await assert.rejects(
        store.updateTimezone(owner.id, 'Asia/Tokyo', KEY, { idempotency: { held: first, answer: () => answerOf('late') } }),
        domainCode('idempotency_key_in_use', 'conflict'),
      );
      assert.equal((await store.findAccount('alice'))?.timezone, 'UTC', 'the update was written anyway');
      assert.deepEqual(await store.listAudit({ username: 'alice' }), [], 'an audit entry was recorded for an update never made');
    });

    test('an update whose expectation fails is precondition_failed, writes nothing and records nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice', { name: 'Alice' }));
      const claim = claimOf(owner.id, 'k1');
      await store.claimIdempotencyKey(claim);
      await assert.rejects(
        store.updateName(owner.id, 'Mallory', KEY, {
          expect: (current) => current.name === 'Someone else',
          idempotency: { held: claim, answer: () => answerOf('written') },
        }),
        domainCode('precondition_failed', 'precondition'),
      );
      assert.equal((await store.findAccount('alice'))?.name, 'Alice');
      assert.deepEqual(await store.listAudit({ username: 'alice' }), [], 'an audit entry was recorded for an update refused');
      assert.equal((await store.claimIdempotencyKey(claimOf(owner.id, 'k1'))).state, 'in_progress', 'an answer was recorded');
    });

    test('the expectation sees the account as it is when written', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const owner = await store.createAccount(account('alice', { name: 'Alice', timezone: 'UTC' }));
      const seen: Account[] = [];
      await store.updateName(owner.id, 'Alice L.', undefined, { expect: (current) => (seen.push(current), true) });
      assert.deepEqual({ name: seen[0]?.name, timezone: seen[0]?.timezone, id: seen[0]?.id }, { name: 'Alice', timezone: 'UTC', id: owner.id });
    });

    test('of concurrent conditional writers that read the same version, through two stores, exactly one writes', async (t) => {
      const subject = await freshStore(t, makeStore);
      const stores = [subject.store, subject.openAnother()];
      const owner = await subject.store.createAccount(account('alice', { name: 'v0' }));
      // Each writer read 'v0' and may write only over it: compare-and-set.
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, index) =>
          stores[index % 2]!.updateName(owner.id, `v1 by ${index}`, KEY, { expect: (current) => current.name === 'v0' }),
        ),
      );
      const written = results.filter((result) => result.status === 'fulfilled');
      const refused = results.filter(
        (result) => result.status === 'rejected' && (result.reason as { code?: string }).code === 'precondition_failed',
      );
      assert.equal(written.length, 1, `${written.length} writers overwrote the same version`);
      assert.equal(refused.length, 11, `the others did not all fail with precondition_failed: ${results.map((r) => r.status).join(', ')}`);
      const stored = await subject.store.findAccount('alice');
      assert.equal(stored?.name, (written[0] as PromiseFulfilledResult<Account>).value.name);
      const entries = await subject.store.listAudit({ username: 'alice' });
      assert.deepEqual(
        entries.map((entry) => entry.changes),
        [{ name: { old: 'v0', new: stored?.name } }],
        'exactly the one write made should be audited',
      );
    });
  });
}
