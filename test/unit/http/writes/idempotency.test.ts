// Protects which answers an Idempotency-Key keeps for replay (results of the request) and which free the key (worth a retry).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { adminAnswerSealing } from '../../../../src/admin/sealed-answers.ts';
import { fingerprint, fingerprintOf, idempotentWrites } from '../../../../src/http/writes/idempotency.ts';
import type { HeldIdempotencyKey, Store, StoredAnswer } from '../../../../src/store/store.ts';

/** A store that grants every claim and records what becomes of it. */
function recordingStore() {
  const calls: { completed: StoredAnswer[]; released: HeldIdempotencyKey[] } = { completed: [], released: [] };
  const store = {
    claimIdempotencyKey: async () => ({ state: 'claimed' as const }),
    completeIdempotencyKey: async (_held: HeldIdempotencyKey, answer: StoredAnswer) => (calls.completed.push(answer), true),
    releaseIdempotencyKey: async (held: HeldIdempotencyKey) => void calls.released.push(held),
  } as unknown as Store;
  return { store, calls };
}

function request(headers: Record<string, string>): FastifyRequest {
  return {
    headers,
    method: 'POST',
    routeFacts: { url: '/api/v0/user' },
    body: { name: 'Alice' },
    caller: { id: 7 },
    log: { warn: () => undefined },
  } as unknown as FastifyRequest;
}

function reply(statusCode: number): FastifyReply {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1' };
  return { statusCode, getHeader: (name: string) => headers[name] } as unknown as FastifyReply;
}

async function settleWith(status: number) {
  const { store, calls } = recordingStore();
  const writes = idempotentWrites({ store });
  const held = request({ 'idempotency-key': 'k1' });
  await writes.claim(held, reply(200));
  await writes.settle(held, reply(status), '{"status":"fail"}');
  return calls;
}

describe('idempotentWrites', () => {
  for (const status of [400, 404, 412]) {
    test(`keeps a ${status}, the request's own result, with its Content-Type and body but not its request id`, async () => {
      const calls = await settleWith(status);
      assert.equal(calls.released.length, 0);
      assert.deepEqual(calls.completed.map((answer) => [answer.status, answer.headers, Buffer.from(answer.body).toString()]), [
        [status, { 'content-type': 'application/json; charset=utf-8' }, '{"status":"fail"}'],
      ]);
    });
  }

  for (const status of [500, 503, 409, 429, 408]) {
    test(`frees the key on a ${status}, so that a retry runs the request again`, async () => {
      const calls = await settleWith(status);
      assert.equal(calls.completed.length, 0, `a ${status} was kept for replay`);
      assert.equal(calls.released.length, 1);
    });
  }

  test('leaves a request without the header alone', async () => {
    const { store, calls } = recordingStore();
    const writes = idempotentWrites({ store });
    const plain = request({});
    assert.equal(await writes.claim(plain, reply(200)), undefined);
    assert.equal(writes.held(plain), undefined);
    await writes.settle(plain, reply(400), 'x');
    assert.deepEqual(calls, { completed: [], released: [] });
  });

  test('settles nothing after the write recorded its answer itself', async () => {
    const { store, calls } = recordingStore();
    const writes = idempotentWrites({ store });
    const held = request({ 'idempotency-key': 'k1' });
    await writes.claim(held, reply(200));
    assert.equal(writes.held(held)?.accountId, 7);
    writes.completed(held);
    await writes.settle(held, reply(200), 'x');
    assert.deepEqual(calls, { completed: [], released: [] });
  });
});

describe('a kept answer the store could not record', () => {
  /** The admin port's order: the write committed, then its 2xx could not be recorded (the store stopped in between). */
  async function committedButUnrecorded(status: number) {
    const released: HeldIdempotencyKey[] = [];
    let fingerprintSeen = '';
    let claims = 0;
    const store = {
      claimIdempotencyKey: async (claim: { fingerprint: string }) => {
        fingerprintSeen = claim.fingerprint;
        // The first claim is granted; the retry finds the first request's claim, unanswered (its answer was never recorded).
        return ++claims === 1 ? { state: 'claimed' as const } : { state: 'in_progress' as const, fingerprint: fingerprintSeen };
      },
      completeIdempotencyKey: async () => {
        throw new Error('connection terminated');
      },
      releaseIdempotencyKey: async (held: HeldIdempotencyKey) => void released.push(held),
    } as unknown as Store;
    const writes = idempotentWrites({ store });
    const first = request({ 'idempotency-key': 'k1' });
    await writes.claim(first, reply(200));
    await writes.settle(first, reply(status), '{"status":"success"}');
    const retry = request({ 'idempotency-key': 'k1' });
    const outcome = await writes.claim(retry, reply(200)).then(() => 'ran again', (error: { code?: string }) => error.code);
    writes.close();
    return { released, outcome };
  }

  test('a 2xx is not freed for a retry to run the committed write again: the retry meets 409 until the lease ends, as after a crash', async () => {
    const { released, outcome } = await committedButUnrecorded(201);
    assert.equal(outcome, 'idempotency_key_in_use');
    assert.equal(released.length, 0, 'the claim of a write that committed was released');
  });

  test('a 400, which changed nothing, is freed so that the retry runs at once', async () => {
    const { released } = await committedButUnrecorded(400);
    assert.equal(released.length, 1);
  });
});

describe('fingerprint', () => {
  test('ignores the order of the parameters, and tells bodies, paths and If-Match apart', () => {
    const base = fingerprint('POST', '/api/v0/user', undefined, { a: '1', b: '2' });
    assert.equal(fingerprint('POST', '/api/v0/user', undefined, { b: '2', a: '1' }), base);
    assert.notEqual(fingerprint('POST', '/api/v0/user', undefined, { a: '1', b: '3' }), base);
    assert.notEqual(fingerprint('POST', '/api/v0/account', undefined, { a: '1', b: '2' }), base);
    assert.notEqual(fingerprint('POST', '/api/v0/user', '"e1"', { a: '1', b: '2' }), base);
  });
});

describe('fingerprint of a request with path parameters (the admin routes)', () => {
  const routed = (params: Record<string, string>, body: object) =>
    ({ method: 'POST', routeFacts: { url: '/admin/v0/keys/:key_id/roll' }, params, body, headers: {} }) as unknown as FastifyRequest;

  test('puts the parameters into the pattern: rolling one key is not rolling another', () => {
    assert.equal(fingerprintOf(routed({ key_id: 'AAA' }, {})), fingerprint('POST', '/admin/v0/keys/AAA/roll', undefined, {}));
    assert.notEqual(fingerprintOf(routed({ key_id: 'AAA' }, {})), fingerprintOf(routed({ key_id: 'BBB' }, {})));
  });

  test("takes JSON's true and 1 for a form's \"true\" and \"1\"", () => {
    assert.equal(fingerprint('POST', '/admin/v0/accounts', undefined, { premium: true, n: 1 }), fingerprint('POST', '/admin/v0/accounts', undefined, { premium: 'true', n: '1' }));
    assert.notEqual(fingerprint('POST', '/admin/v0/accounts', undefined, { premium: true }), fingerprint('POST', '/admin/v0/accounts', undefined, { premium: false }));
  });
});

describe('adminAnswerSealing', () => {
  const withToken = (token: string) => ({ headers: { authorization: `Bearer ${token}` } }) as unknown as FastifyRequest;
  const body = Buffer.from('{"status":"success","data":{"key":"aapi_live_secret"}}');

  test('opens what it sealed for the same token and key, and the sealed bytes do not show the answer', () => {
    const sealed = adminAnswerSealing.seal(withToken('aapi_admin_t1'), 'k1', body);
    assert.ok(!Buffer.from(sealed).includes('aapi_live_secret'), 'the secret shows through the seal');
    assert.ok(Buffer.from(adminAnswerSealing.open(withToken('aapi_admin_t1'), 'k1', sealed)).equals(body));
  });

  test('cannot be opened with another token or another Idempotency-Key', () => {
    const sealed = adminAnswerSealing.seal(withToken('aapi_admin_t1'), 'k1', body);
    assert.throws(() => adminAnswerSealing.open(withToken('aapi_admin_t2'), 'k1', sealed));
    assert.throws(() => adminAnswerSealing.open(withToken('aapi_admin_t1'), 'k2', sealed));
  });
});
