// The versioned cache answers only vouched keys, so the memory of keys seen right (VerifiedKeys) holds at least as many as
// CREDENTIAL_CACHE_SIZE: past it every request would be a stranger's again (a row read,
// and three Redis round trips instead of one).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { issueKey } from '../../../../src/domain/api-keys.ts';
import { authenticator } from '../../../../src/http/auth/authenticate.ts';
import type { KeyCharge, RateBudgets } from '../../../../src/http/limits/rate-limits.ts';
import type { Credential, Store } from '../../../../src/store/store.ts';

test('with CREDENTIAL_CACHE_SIZE 20,000 and 10,001 keys in rotation, the third round reads no row', async () => {
  const KEYS = 10_001;
  const keys = Array.from({ length: KEYS }, () => issueKey('live'));
  const byId = new Map(keys.map((key) => [key.keyId, key]));
  let reads = 0;
  let authAttempts = 0;
  const store = {
    findCredential: async (keyId: string): Promise<Credential> => {
      reads++;
      return {
        keyId,
        hash: byId.get(keyId)!.hash,
        revoked: false,
        scope: 'write',
        expiresAtMs: null,
        account: { id: 1, username: 'alice', name: 'A', timezone: 'UTC', premium: true, createdAt: '2026-01-01T00:00:00.000Z' },
      };
    },
    touchKey: async () => {},
  } as unknown as Store;
  const budgets: RateBudgets = {
    spendAuthAttempt: async () => {
      authAttempts++;
      return { window: 0 };
    },
    refundAuthAttempt: () => undefined,
    countAuthAttempt: () => ({ attempt: null, over: null }),
    refuseAuthAttempt: () => assert.fail('not over'),
    charge: () => assert.fail('keys are charged by chargeKey'),
    chargeKey: async (): Promise<KeyCharge> => ({ current: 1, resetMs: 60_000, window: 0, version: 'v1', touchDue: false }),
  };
  const authenticate = authenticator(budgets, {
    store,
    environment: 'live',
    realm: 'test',
    touchIntervalMs: 60_000,
    credentialCache: { maxAgeMs: 600_000, maxEntries: 20_000 },
  });
  const reply = { header: () => reply } as unknown as FastifyReply;
  const round = async () => {
    for (const key of keys) {
      const authorization = `Basic ${Buffer.from(`alice:${key.token}`).toString('base64')}`;
      const request = { headers: { authorization }, raw: { rawHeaders: ['Authorization', authorization] }, log: { info() {}, warn() {} } } as unknown as FastifyRequest;
      await authenticate(request, reply, 'premium');
    }
  };
  await round();
  await round();
  const [readsBefore, attemptsBefore] = [reads, authAttempts];
  await round();
  assert.equal(
    reads - readsBefore,
    0,
    `third round: ${reads - readsBefore} row reads and ${authAttempts - attemptsBefore} failed-attempt spends for ${KEYS} keys, with room for 20,000 in the cache`,
  );
});
