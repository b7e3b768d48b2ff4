// Contract cases for the operator console's sessions: found by the hash of their cookie's secret with their admin token's
// state, touched forward only, ended at sign-out, refused (and deleted) once their token is revoked, pruned by either lifetime.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { requiring } from '../support/requiring.ts';

import { issueAdminToken } from '../../src/domain/admin-tokens.ts';
import type { Store } from '../../src/store/store.ts';
import { domainCode, freshStore, type MakeStore } from './contract-support.ts';

/** The SHA-256 of a fresh cookie secret, as the console keeps it. */
function sessionHash(): Uint8Array {
  return createHash('sha256').update(randomBytes(32)).digest();
}

async function adminToken(store: Store): Promise<string> {
  const issued = issueAdminToken();
  await store.createAdminToken({ tokenId: issued.tokenId, hash: issued.hash, displayPrefix: issued.displayPrefix, label: 'console', createdBy: 'cli:ops' });
  return issued.tokenId;
}

const at = (time: string) => new Date(`2026-11-26T${time}Z`);

export function defineConsoleSessionCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: console sessions`, () => {
    test('a created session is found by its hash with its token and times, last seen when created; an unknown hash is null', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const tokenId = await adminToken(store);
      const hash = sessionHash();
      await store.createConsoleSession({ hash, tokenId, createdAt: at('12:34:56.789') });
      assert.deepEqual(await store.findConsoleSession(hash), {
        tokenId,
        createdAt: at('12:34:56.789'),
        lastSeenAt: at('12:34:56.789'),
        tokenRevoked: false,
      });
      // The same bytes in a plain Uint8Array (not a Buffer) find it too.
      assert.equal((await store.findConsoleSession(new Uint8Array(hash)))?.tokenId, tokenId);
      assert.equal(await store.findConsoleSession(sessionHash()), null, 'an unknown hash found a session');
    });

    test('a session for an admin token that does not exist is admin_token_not_found, and nothing is stored', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const hash = sessionHash();
      await assert.rejects(store.createConsoleSession({ hash, tokenId: '000000000000', createdAt: at('12:00:00.000') }), domainCode('admin_token_not_found', 'not_found'));
      assert.equal(await store.findConsoleSession(hash), null);
    });

    test('touching moves the last request forward and never back, even when two touches race through two stores', async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      const other = subject.openAnother();
      const tokenId = await adminToken(store);
      const hash = sessionHash();
      await store.createConsoleSession({ hash, tokenId, createdAt: at('12:00:00.000') });
      await store.touchConsoleSession(hash, at('12:05:00.250'));
      assert.deepEqual((await store.findConsoleSession(hash))?.lastSeenAt, at('12:05:00.250'));
      // A late touch (a slower request's) does not move it back.
      await store.touchConsoleSession(hash, at('12:01:00.000'));
      assert.deepEqual((await store.findConsoleSession(hash))?.lastSeenAt, at('12:05:00.250'), 'an earlier touch moved last seen back');
      await Promise.all([other.touchConsoleSession(hash, at('12:10:00.000')), store.touchConsoleSession(hash, at('12:09:00.000'))]);
      const found = await other.findConsoleSession(hash);
      assert.deepEqual(found?.lastSeenAt, at('12:10:00.000'), 'of two racing touches, the earlier time won');
      assert.deepEqual(found?.createdAt, at('12:00:00.000'), 'touching changed the creation time');
      // Touching a session that is gone is no error and creates nothing.
      const gone = sessionHash();
      await store.touchConsoleSession(gone, at('12:11:00.000'));
      assert.equal(await store.findConsoleSession(gone), null);
    });

    test('ending a session removes it and leaves the others; ending it again is no error', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const tokenId = await adminToken(store);
      const ended = sessionHash();
      const kept = sessionHash();
      await store.createConsoleSession({ hash: ended, tokenId, createdAt: at('12:00:00.000') });
      await store.createConsoleSession({ hash: kept, tokenId, createdAt: at('12:00:00.000') });
      await store.endConsoleSession(ended);
      assert.equal(await store.findConsoleSession(ended), null, 'an ended session is still found');
      await store.endConsoleSession(ended);
      await store.endConsoleSession(sessionHash());
      assert.equal((await store.findConsoleSession(kept))?.tokenId, tokenId, 'ending one session ended another');
    });

    test("revoking an admin token deletes its sessions in the same step, and leaves another token's alone", async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      const revoked = await adminToken(store);
      const other = await adminToken(store);
      const first = sessionHash();
      const second = sessionHash();
      const untouched = sessionHash();
      await store.createConsoleSession({ hash: first, tokenId: revoked, createdAt: at('12:00:00.000') });
      await store.createConsoleSession({ hash: second, tokenId: revoked, createdAt: at('12:01:00.000') });
      await store.createConsoleSession({ hash: untouched, tokenId: other, createdAt: at('12:02:00.000') });
      await store.revokeAdminToken(revoked);
      // Had the rows remained, they would be found with tokenRevoked (next case): null says they were deleted.
      assert.equal(await store.findConsoleSession(first), null, "a revoked token's session was not deleted");
      assert.equal(await subject.openAnother().findConsoleSession(second), null, "a revoked token's session was not deleted");
      assert.deepEqual(await store.findConsoleSession(untouched), {
        tokenId: other,
        createdAt: at('12:02:00.000'),
        lastSeenAt: at('12:02:00.000'),
        tokenRevoked: false,
      });
    });

    test("a session whose token was revoked behind the store's back is found, and says its token is revoked", async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      const tokenId = await adminToken(store);
      const hash = sessionHash();
      await store.createConsoleSession({ hash, tokenId, createdAt: at('12:00:00.000') });
      await subject.revokeAdminTokenBehindTheStore(tokenId);
      assert.equal((await store.findConsoleSession(hash))?.tokenRevoked, true, 'the join did not see the revocation');
      // A session created after its token was revoked (sign-in racing the revocation) is refused the same way.
      const late = sessionHash();
      await store.createConsoleSession({ hash: late, tokenId, createdAt: at('12:01:00.000') });
      assert.equal((await store.findConsoleSession(late))?.tokenRevoked, true);
    });

    test('pruning deletes the sessions created before one cut-off or last seen before the other, and keeps the rest', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const tokenId = await adminToken(store);
      const session = async (created: string, seen: string): Promise<Uint8Array> => {
        const hash = sessionHash();
        await store.createConsoleSession({ hash, tokenId, createdAt: at(created) });
        if (seen !== created) await store.touchConsoleSession(hash, at(seen));
        return hash;
      };
      const tooOld = await session('10:00:00.000', '10:00:00.000');
      const tooOldThoughBusy = await session('10:00:00.000', '12:30:00.000');
      const idle = await session('11:30:00.000', '11:59:59.999');
      const live = await session('11:30:00.000', '12:10:00.000');
      const onTheCutOffs = await session('11:00:00.000', '12:00:00.000');
      assert.equal(await store.pruneConsoleSessions(at('11:00:00.000'), at('12:00:00.000')), 3);
      for (const [name, hash] of Object.entries({ tooOld, tooOldThoughBusy, idle })) {
        assert.equal(await store.findConsoleSession(hash), null, `the ${name} session was kept`);
      }
      assert.deepEqual((await store.findConsoleSession(live))?.lastSeenAt, at('12:10:00.000'), 'a live session was pruned');
      assert.deepEqual((await store.findConsoleSession(onTheCutOffs))?.createdAt, at('11:00:00.000'), 'the cut-offs are not exclusive');
      assert.equal(await store.pruneConsoleSessions(at('11:00:00.000'), at('12:00:00.000')), 0, 'a second run deleted more');
    });

    test('pruning works in bounded batches however many sessions are due', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const tokenId = await adminToken(store);
      // 5,001 sessions: more than one batch (PRUNE_BATCH_ROWS is 5,000).
      for (let done = 0; done < 5001; ) {
        const now = Math.min(100, 5001 - done);
        await Promise.all(Array.from({ length: now }, () => store.createConsoleSession({ hash: sessionHash(), tokenId, createdAt: at('08:00:00.000') })));
        done += now;
      }
      const kept = sessionHash();
      await store.createConsoleSession({ hash: kept, tokenId, createdAt: at('12:00:00.000') });
      assert.equal(await store.pruneConsoleSessions(at('09:00:00.000'), at('09:00:00.000')), 5001);
      assert.equal((await store.findConsoleSession(kept))?.tokenId, tokenId);
    });
  });
}
