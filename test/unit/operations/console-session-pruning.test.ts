// serve's console session pruning: once the store serves, with both cut-offs (the absolute and the idle lifetime), per interval.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startConsoleSessionPruning } from '../../../src/operations/console-session-pruning.ts';
import type { ConsoleSessionStore } from '../../../src/store/console-sessions/console-session-store.ts';

test('prunes sessions created before now - max or last seen before now - idle, once the store serves and every interval', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const cutoffs: [string, string][] = [];
  const store = {
    pruneConsoleSessions: async (createdBefore: Date, seenBefore: Date) => (cutoffs.push([createdBefore.toISOString(), seenBefore.toISOString()]), 1),
  } as unknown as ConsoleSessionStore;
  const now = Date.parse('2026-11-26T12:00:00Z');
  const stop = startConsoleSessionPruning(
    { store, idleMs: 30 * 60_000, maxMs: 12 * 3_600_000, storeReady: Promise.resolve(), intervalMs: 1000, log: { info: () => {}, warn: () => {} } },
    () => now,
  );
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(cutoffs, [['2026-11-26T00:00:00.000Z', '2026-11-26T11:30:00.000Z']]);
  t.mock.timers.tick(1000);
  assert.equal(cutoffs.length, 2);
  stop();
  t.mock.timers.tick(5000);
  assert.equal(cutoffs.length, 2, 'ran after stop');
});
