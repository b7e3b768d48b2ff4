// serve's key usage pruning: nothing before the store serves, a first run as soon as it does, then one per interval, and
// none after stop.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startKeyUsagePruning } from '../../../src/operations/key-usage-pruning.ts';
import type { Store } from '../../../src/store/store.ts';

test('prunes once the store serves, then every interval, with the retention cut-off; stop ends it', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const cutoffs: string[] = [];
  const store = { pruneKeyUsage: async (before: string) => (cutoffs.push(before), 3) } as unknown as Store;
  const logged: string[] = [];
  let ready!: () => void;
  const storeReady = new Promise<void>((resolve) => (ready = resolve));
  const stop = startKeyUsagePruning({
    store,
    retentionDays: 90,
    storeReady,
    intervalMs: 1000,
    log: { info: (_fields, message) => logged.push(message), warn: (_fields, message) => logged.push(message) },
  });
  await Promise.resolve();
  assert.equal(cutoffs.length, 0, 'pruned before the store served');
  ready();
  await storeReady;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(cutoffs.length, 1, 'no first run once the store served');
  // 90 days before today (UTC): the same day, or the day before should the run have fallen just before midnight.
  const expected = new Date(Date.now() - 90 * 86_400_000).toISOString().slice(0, 10);
  assert.ok(cutoffs[0]! <= expected, `cut-off ${cutoffs[0]}, expected ${expected}`);
  t.mock.timers.tick(1000);
  assert.equal(cutoffs.length, 2, 'no run after the interval');
  stop();
  t.mock.timers.tick(5000);
  assert.equal(cutoffs.length, 2, 'ran after stop');
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(logged.includes('key usage past retention deleted'), logged.join(', '));
});
