// Protects the background pruning of expired idempotency keys: it runs on its interval, never keeps the process alive, stops.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as settled } from 'node:timers/promises';

import { DomainError } from '../../../src/domain/errors.ts';
import { pruneIdempotencyKeysEvery } from '../../../src/store/idempotency/pruning.ts';
import type { Store } from '../../../src/store/store.ts';

function pruningStore(outcome: () => Promise<number>) {
  const state = { runs: 0 };
  const store = { pruneIdempotencyKeys: () => (state.runs++, outcome()) } as unknown as Store;
  return { store, state };
}

test('prunes on every interval until stopped', (t) => {
  // Mocked timers: the count depends on how many intervals came due, not on how busy the machine is.
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { store, state } = pruningStore(async () => 0);
  const stop = pruneIdempotencyKeysEvery(store, 10, { warn: () => assert.fail('nothing failed') });
  t.mock.timers.tick(9);
  assert.equal(state.runs, 0, 'pruned before the first interval had passed');
  t.mock.timers.tick(1);
  assert.equal(state.runs, 1, 'did not prune when the first interval came due');
  t.mock.timers.tick(20);
  assert.equal(state.runs, 3, 'did not prune on each of the next two intervals');
  stop();
  t.mock.timers.tick(100);
  assert.equal(state.runs, 3, 'pruning went on after stop()');
});

test('a database that is away is not worth a log line; any other failure is logged', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const warnings: string[] = [];
  const log = { warn: (_fields: object, message: string) => void warnings.push(message) };
  const away = pruningStore(async () => Promise.reject(new DomainError('unavailable', 'store_unavailable', 'away')));
  const stopAway = pruneIdempotencyKeysEvery(away.store, 5, log);
  t.mock.timers.tick(15);
  stopAway();
  await settled();
  assert.equal(away.state.runs, 3, 'the away store was not tried on each interval');
  assert.deepEqual(warnings, []);
  const broken = pruningStore(async () => Promise.reject(new Error('disk full')));
  const stopBroken = pruneIdempotencyKeysEvery(broken.store, 5, log);
  t.mock.timers.tick(15);
  stopBroken();
  await settled();
  assert.equal(warnings.length, 3, `expected one warning per failed run, got: ${warnings.join('; ')}`);
  assert.ok(warnings.every((message) => /pruning expired idempotency keys failed/.test(message)), warnings.join('; '));
});

test('the timer never keeps the process alive', () => {
  const { store } = pruningStore(async () => 0);
  const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const stop = pruneIdempotencyKeysEvery(store, 60_000, { warn: () => undefined });
  try {
    // An unref'd timer is not listed among the resources that keep the event loop alive.
    assert.equal(process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length, before);
  } finally {
    stop();
  }
});
