// The PostgreSQL + Redis credential cache: an entry answers only under the version it was read under, young enough, and
// only once a vouched key's charge has read the version before the row (never on a key's first request in a process).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { issueKey } from '../../../../src/domain/api-keys.ts';
import { authenticator } from '../../../../src/http/auth/authenticate.ts';
import { VersionedCredentials } from '../../../../src/http/auth/versioned-credentials.ts';
import type { KeyCharge, RateBudgets } from '../../../../src/http/limits/rate-limits.ts';
import type { Credential, Store } from '../../../../src/store/store.ts';

function credentialOf(keyId: string, name = 'Alice'): Credential {
  return {
    keyId,
    hash: new Uint8Array(32),
    revoked: false,
    scope: 'write',
    expiresAtMs: null,
    account: { id: 1, username: 'alice', name, timezone: 'UTC', premium: true, createdAt: '2026-01-01T00:00:00.000Z' },
  };
}

describe('VersionedCredentials', () => {
  test('answers under the version it was read under, and not under another (which drops it)', () => {
    const cache = new VersionedCredentials({ maxAgeMs: 30_000, maxEntries: 10 });
    cache.set('k1', 'v1', credentialOf('k1'));
    assert.equal(cache.get('k1', 'v1')?.keyId, 'k1');
    assert.equal(cache.get('k1', 'v2'), undefined, 'a changed version must force a reload');
    assert.equal(cache.get('k1', 'v1'), undefined, 'the entry of an old version is gone once another was seen');
  });

  test('an entry older than the max age is read again, whatever the version', () => {
    let now = 1_000_000;
    const cache = new VersionedCredentials({ maxAgeMs: 30_000, maxEntries: 10, now: () => now });
    cache.set('k1', 'v1', credentialOf('k1'));
    now += 29_999;
    assert.ok(cache.get('k1', 'v1'), 'still young');
    now += 1;
    assert.equal(cache.get('k1', 'v1'), undefined, 'a change never announced (a crash) must be seen within the max age');
  });

  test('the age runs from when the row was asked for, not from when it arrived', () => {
    let now = 1_000_000;
    const cache = new VersionedCredentials({ maxAgeMs: 30_000, maxEntries: 10, now: () => now });
    cache.set('k1', 'v1', credentialOf('k1'), now - 29_000);
    now += 1_000;
    assert.equal(cache.get('k1', 'v1'), undefined);
  });

  test('holds at most maxEntries, dropping the oldest read first', () => {
    const cache = new VersionedCredentials({ maxAgeMs: 30_000, maxEntries: 2 });
    cache.set('k1', 'v', credentialOf('k1'));
    cache.set('k2', 'v', credentialOf('k2'));
    cache.set('k1', 'v', credentialOf('k1')); // read again: now the newest
    cache.set('k3', 'v', credentialOf('k3'));
    assert.equal(cache.size, 2);
    assert.equal(cache.get('k2', 'v'), undefined, 'the oldest read is dropped');
    assert.ok(cache.get('k1', 'v'));
    assert.ok(cache.get('k3', 'v'));
  });

  test('maxEntries 0 keeps nothing', () => {
    const cache = new VersionedCredentials({ maxAgeMs: 30_000, maxEntries: 0 });
    cache.set('k1', 'v', credentialOf('k1'));
    assert.equal(cache.get('k1', 'v'), undefined);
  });
});

describe('authentication with the credential cache', () => {
  const issued = issueKey('live');
  const authorization = `Basic ${Buffer.from(`alice:${issued.token}`).toString('base64')}`;
  const request = () =>
    ({ headers: { authorization }, raw: { rawHeaders: ['Authorization', authorization] }, log: { info() {}, warn() {} } }) as unknown as FastifyRequest;
  const reply = { header: () => reply } as unknown as FastifyReply;

  function harness() {
    let version = 'v1';
    let name = 'Alice';
    const reads: string[] = [];
    const touches: string[] = [];
    const store = {
      findCredential: async (keyId: string) => {
        reads.push(keyId);
        return { ...credentialOf(keyId, name), hash: issued.hash };
      },
      touchKey: async (keyId: string) => void touches.push(keyId),
    } as unknown as Store;
    const charges: string[] = [];
    const budgets: RateBudgets = {
      spendAuthAttempt: () => null,
      refundAuthAttempt: () => undefined,
      countAuthAttempt: () => ({ attempt: null, over: null }),
      refuseAuthAttempt: () => assert.fail('no attempt is over the budget here'),
      charge: () => assert.fail('an API key is charged by chargeKey'),
      chargeKey: async (_request, _reply, owner): Promise<KeyCharge> => {
        charges.push(owner);
        return { current: 1, resetMs: 60_000, window: 0, version, touchDue: charges.length === 1 };
      },
    };
    const authenticate = authenticator(budgets, {
      store,
      environment: 'live',
      realm: 'test',
      touchIntervalMs: 60_000,
      credentialCache: { maxAgeMs: 30_000, maxEntries: 100 },
    });
    return {
      reads,
      touches,
      charges,
      setVersion: (next: string) => void (version = next),
      rename: (next: string) => void (name = next),
      call: async () => {
        const each = request();
        await authenticate(each, reply, 'premium');
        return each;
      },
    };
  }

  test('the first request (not vouched: its version is read after the row) is not cached; the second caches; the third reads nothing', async () => {
    const h = harness();
    await h.call();
    assert.equal(h.reads.length, 1);
    await h.call();
    assert.equal(h.reads.length, 2, 'the first request must not have cached the row under a version read after it');
    await h.call();
    await h.call();
    assert.equal(h.reads.length, 2, 'a vouched request under an unchanged version reads no row');
    assert.deepEqual(h.charges, ['alice', 'alice', 'alice', 'alice'], 'every request is charged once, to its account');
  });

  test('a new version makes the very next request read the row again, and answer what it read', async () => {
    const h = harness();
    await h.call();
    await h.call();
    await h.call();
    h.rename('Alice Renamed');
    assert.equal((await h.call()).caller?.name, 'Alice', 'no announcement yet: the cached row answers');
    h.setVersion('v2');
    const after = await h.call();
    assert.equal(h.reads.length, 3);
    assert.equal(after.caller?.name, 'Alice Renamed');
  });

  test('the use is recorded only when the charge says a stamp is due', async () => {
    const h = harness();
    for (let i = 0; i < 5; i++) await h.call();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(h.touches.length, 1, `${h.touches.length} stamps for one due`);
  });
});
