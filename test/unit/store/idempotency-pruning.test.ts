// Protects the background pruning of expired idempotency keys: it runs on its interval, never keeps the process alive, stops.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { DomainError } from '../../../src/domain/errors.ts';
import { pruneIdempotencyKeysEvery } from '../../../src/store/idempotency-pruning.ts';
import type { Store } from '../../../src/store/store.ts';

function pruningStore(outcome: () => Promise<number>) {
  const state = { runs: 0 };
  const store = { pruneIdempotencyKeys: () => (state.runs++, outcome()) } as unknown as Store;
  return { store, state };
}

test('prunes on every interval until stopped', async () => {
  const { store, state } = pruningStore(async () => 0);
  const stop = pruneIdempotencyKeysEvery(store, 10, { warn: () => assert.fail('nothing failed') });
  await sleep(55);
  stop();
  const runs = state.runs;
  assert.ok(runs >= 3, `pruned ${runs} times in 55 ms at a 10 ms interval`);
  await sleep(30);
  assert.equal(state.runs, runs, 'pruning went on after stop()');
});

test('a database that is away is not worth a log line; any other failure is logged', async () => {
  const warnings: string[] = [];
  const log = { warn: (_fields: object, message: string) => void warnings.push(message) };
  const away = pruningStore(async () => Promise.reject(new DomainError('unavailable', 'store_unavailable', 'away')));
  const stopAway = pruneIdempotencyKeysEvery(away.store, 5, log);
  await sleep(30);
  stopAway();
  assert.deepEqual(warnings, []);
  const broken = pruningStore(async () => Promise.reject(new Error('disk full')));
  const stopBroken = pruneIdempotencyKeysEvery(broken.store, 5, log);
  await sleep(30);
  stopBroken();
  assert.ok(warnings.length > 0 && warnings.every((message) => /pruning expired idempotency keys failed/.test(message)), warnings.join('; '));
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
