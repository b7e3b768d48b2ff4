// An unknown user (or admin token) costs the same work as a wrong key: one store lookup, then every byte of a hash compared.
// Counted, not timed, so a busy machine cannot flip it; the timing itself is measured by `npm run test:timing`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { adminAuthenticator } from '../../../../src/http/auth/admin-auth.ts';
import { composeAdminToken, issueAdminToken } from '../../../../src/domain/admin-tokens.ts';
import { composeKey, hashKey, issueKey, randomBase62 } from '../../../../src/domain/api-keys.ts';
import { authenticator } from '../../../../src/http/auth/authenticate.ts';
import { HttpError } from '../../../../src/http/failures/http-error.ts';
import type { RateBudgets } from '../../../../src/http/limits/rate-limits.ts';
import type { AdminCredential, Credential, Store } from '../../../../src/store/store.ts';
import { basic } from '../../../support/http.ts';

/** A hash whose byte reads are counted: the comparison is constant-time only if it reads every one. */
function countedHash(bytes: Uint8Array): { hash: Uint8Array; reads: () => number; reset: () => void } {
  let reads = 0;
  const hash = new Proxy(bytes, {
    get(target, property) {
      if (typeof property === 'string' && /^\d+$/.test(property)) reads++;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { hash, reads: () => reads, reset: () => void (reads = 0) };
}

/** Budgets that never refuse: this test is about the work of judging a credential, not about the budget. */
const openBudgets: RateBudgets = {
  spendAuthAttempt: () => null,
  refundAuthAttempt: () => undefined,
  countAuthAttempt: () => ({ attempt: null, over: null }),
  refuseAuthAttempt: () => assert.fail('no attempt is over the budget here'),
  charge: () => undefined,
  chargeKey: () => undefined,
};

const silentLog = { info: () => undefined, warn: () => undefined };

function fakeRequest(authorization: string): FastifyRequest {
  return { headers: { authorization }, raw: { rawHeaders: ['Authorization', authorization] }, log: silentLog } as unknown as FastifyRequest;
}
const fakeReply = { header: () => fakeReply } as unknown as FastifyReply;

/** Runs `step` and returns the 401 it refused with (as `code: message`); fails if it let the request through. */
async function refusal(step: () => void | Promise<void>): Promise<string> {
  try {
    await step();
  } catch (error) {
    assert.ok(error instanceof HttpError, `not an HttpError: ${String(error)}`);
    assert.equal(error.statusCode, 401);
    return `${error.code}: ${error.message}`;
  }
  return assert.fail('a wrong credential was let through');
}

test('an unknown user costs one store lookup and a whole-hash comparison against the decoy, as a wrong key does', async () => {
  const alicesKey = issueKey('live');
  const alicesHash = countedHash(alicesKey.hash);
  const decoy = countedHash(hashKey('aapi_live_decoy'));
  const alice: Credential = {
    keyId: alicesKey.keyId,
    hash: alicesHash.hash,
    revoked: false,
    scope: 'write',
    expiresAtMs: null,
    account: { id: 1, username: 'alice', name: 'Alice', timezone: 'UTC', premium: true, createdAt: '2026-01-01T00:00:00.000Z' },
  };
  const lookups: string[] = [];
  const store = {
    findCredential: (keyId: string) => (lookups.push(keyId), keyId === alice.keyId ? alice : null),
    touchKey: async () => assert.fail('no key was right, so none is touched'),
  } as unknown as Store;
  const authenticate = authenticator(openBudgets, { store, environment: 'live', realm: 'test', touchIntervalMs: 60_000, decoyHash: decoy.hash });

  const neverIssued = issueKey('live');
  const wrongSecret = composeKey('live', alicesKey.keyId, randomBase62(32)).token;
  const cases = [
    { name: 'wrong key', authorization: basic('alice', wrongSecret), comparedWith: alicesHash },
    { name: 'unknown user, existing key id', authorization: basic('nobody', wrongSecret), comparedWith: alicesHash },
    { name: 'unknown user', authorization: basic('nobody', neverIssued.token), comparedWith: decoy },
    { name: 'known user, key never issued', authorization: basic('alice', neverIssued.token), comparedWith: decoy },
  ];
  const refusals = new Set<string>();
  for (const { name, authorization, comparedWith } of cases) {
    lookups.length = 0;
    alicesHash.reset();
    decoy.reset();
    refusals.add(await refusal(() => authenticate(fakeRequest(authorization), fakeReply, 'premium')));
    assert.equal(lookups.length, 1, `${name}: ${lookups.length} store lookups, not one`);
    assert.equal(comparedWith.reads(), alicesKey.hash.length, `${name}: ${comparedWith.reads()} of the hash's ${alicesKey.hash.length} bytes compared`);
    const other = comparedWith === decoy ? alicesHash : decoy;
    assert.equal(other.reads(), 0, `${name}: compared against a second hash as well`);
  }
  assert.deepEqual([...refusals], ['invalid_credentials: The username or API key is wrong.'], 'the refusals differ');
});

test('an unknown admin token costs one store lookup and a whole-hash comparison against the decoy, as a wrong one does', async () => {
  const issued = issueAdminToken('live');
  const tokenHash = countedHash(issued.hash);
  const decoy = countedHash(hashKey('aapi_admin_decoy'));
  const stored: AdminCredential = { tokenId: issued.tokenId, hash: tokenHash.hash, revoked: false };
  const lookups: string[] = [];
  const store = {
    findAdminToken: async (tokenId: string) => (lookups.push(tokenId), tokenId === issued.tokenId ? stored : null),
    touchAdminToken: async () => assert.fail('no token was right, so none is touched'),
  } as unknown as Store;
  const authenticate = adminAuthenticator(openBudgets, { store, environment: 'live', touchIntervalMs: 60_000, decoyHash: decoy.hash });

  const cases = [
    { name: 'wrong token', token: composeAdminToken(issued.tokenId, randomBase62(32)).token, comparedWith: tokenHash },
    { name: 'unknown token', token: issueAdminToken('live').token, comparedWith: decoy },
  ];
  const refusals = new Set<string>();
  for (const { name, token, comparedWith } of cases) {
    lookups.length = 0;
    tokenHash.reset();
    decoy.reset();
    refusals.add(await refusal(() => authenticate(fakeRequest(`Bearer ${token}`), fakeReply, 'token')));
    assert.equal(lookups.length, 1, `${name}: ${lookups.length} store lookups, not one`);
    assert.equal(comparedWith.reads(), issued.hash.length, `${name}: ${comparedWith.reads()} of the hash's ${issued.hash.length} bytes compared`);
    const other = comparedWith === decoy ? tokenHash : decoy;
    assert.equal(other.reads(), 0, `${name}: compared against a second hash as well`);
  }
  assert.deepEqual([...refusals], ['invalid_admin_token: The admin token is wrong.'], 'the refusals differ');
});
