// Protects the releases the store refused: retried until it answers, and taken over at once by a retry of the same key.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { unreleasedKeys } from '../../../../src/http/writes/unreleased-keys.ts';
import type { HeldIdempotencyKey } from '../../../../src/store/store.ts';
import { eventually } from '../../../support/eventually.ts';

/** A store whose release fails while `down`, recording every attempt. */
function flakyStore() {
  const state = { down: true, attempts: 0, released: [] as HeldIdempotencyKey[] };
  const store = {
    releaseIdempotencyKey: async (held: HeldIdempotencyKey) => {
      state.attempts++;
      if (state.down) throw new Error('store unavailable');
      state.released.push(held);
    },
  };
  return { store, state };
}

const log = { info: () => undefined } as unknown as FastifyBaseLogger;
const held: HeldIdempotencyKey = { accountId: 7, key: 'k1', token: 't1' };

describe('unreleasedKeys', () => {
  test('retries a refused release until the store answers, then releases it once', async () => {
    const { store, state } = flakyStore();
    const keys = unreleasedKeys(store);
    try {
      keys.keep(held, Date.now() + 60_000, log);
      await eventually('two refused attempts', () => state.attempts, (attempts) => attempts >= 2);
      assert.deepEqual(state.released, []);
      state.down = false;
      await eventually('the release once the store answers', () => state.released.length, (released) => released === 1);
      assert.deepEqual(state.released, [held]);
      assert.equal(await keys.releaseNow(held), false, 'released claims are forgotten');
    } finally {
      keys.close();
    }
  });

  test('a retry from the same owner and key releases the claim at once; another key finds nothing', async () => {
    const { store, state } = flakyStore();
    const keys = unreleasedKeys(store);
    try {
      keys.keep(held, Date.now() + 60_000, log);
      state.down = false;
      assert.equal(await keys.releaseNow({ accountId: 7, key: 'other', token: 'new' }), false);
      assert.equal(await keys.releaseNow({ adminTokenId: '7', key: 'k1', token: 'new' }), false, 'an admin token is another owner');
      assert.equal(await keys.releaseNow({ accountId: 7, key: 'k1', token: 'new' }), true);
      assert.deepEqual(state.released, [held], 'the claim released is the one kept, with its own token');
    } finally {
      keys.close();
    }
  });
});
