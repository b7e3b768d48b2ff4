// The usage counter: what one answer adds, what a flush writes, that a window never crosses UTC midnight, and that a failed
// write is kept and added to the next one.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { outcomeIndex, KEY_USAGE_OUTCOMES } from '../../../../src/domain/key-usage.ts';
import { KeyUsageCounter } from '../../../../src/http/observability/key-usage.ts';
import type { KeyUsageBatch, KeyUsageStore } from '../../../../src/store/store.ts';

class RecordingStore implements Pick<KeyUsageStore, 'recordKeyUsage'> {
  readonly batches: KeyUsageBatch[] = [];
  failures = 0;
  async recordKeyUsage(batch: KeyUsageBatch): Promise<void> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('database away');
    }
    this.batches.push(batch);
  }
}

function counterOver(store: RecordingStore, clock: { now: number }, warnings: string[] = []) {
  return new KeyUsageCounter({
    store: store as unknown as KeyUsageStore,
    flushIntervalMs: 10_000,
    log: { warn: (_fields, message) => warnings.push(message) },
    now: () => clock.now,
  });
}

const sorted = (batch: KeyUsageBatch) => [...batch.counts].sort((a, b) => `${a.keyId}${a.outcome}`.localeCompare(`${b.keyId}${b.outcome}`));

test('each status has its outcome: 2xx/3xx success, 429 rate-limited, 401/403 refused, other 4xx client error, 5xx server error', () => {
  const outcomeOf = (status: number) => KEY_USAGE_OUTCOMES[outcomeIndex(status)];
  assert.deepEqual(
    [200, 201, 204, 304, 400, 401, 403, 404, 409, 412, 429, 500, 503].map(outcomeOf),
    ['success', 'success', 'success', 'success', 'client_error', 'refused', 'refused', 'client_error', 'client_error', 'client_error', 'rate_limited', 'server_error', 'server_error'],
  );
});

test('a flush writes one count per key, day and outcome, and the addresses with when each was last seen', async () => {
  const store = new RecordingStore();
  const clock = { now: Date.parse('2026-11-26T10:00:00Z') };
  const counter = counterOver(store, clock);
  for (let i = 0; i < 3; i++) counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  clock.now += 1000;
  counter.count('KEYAAAAAAAAA', 429, '203.0.113.2');
  counter.count('KEYAAAAAAAAA', 404, '203.0.113.2');
  counter.count('KEYBBBBBBBBB', 403, undefined);
  clock.now += 1000;
  await counter.flush();
  assert.equal(store.batches.length, 1);
  const [batch] = store.batches;
  assert.deepEqual(sorted(batch!), [
    { keyId: 'KEYAAAAAAAAA', day: '2026-11-26', outcome: 'client_error', count: 1 },
    { keyId: 'KEYAAAAAAAAA', day: '2026-11-26', outcome: 'rate_limited', count: 1 },
    { keyId: 'KEYAAAAAAAAA', day: '2026-11-26', outcome: 'success', count: 3 },
    { keyId: 'KEYBBBBBBBBB', day: '2026-11-26', outcome: 'refused', count: 1 },
  ]);
  // The first address was last seen when the second took its place; the latest, until the flush.
  assert.deepEqual(batch!.addresses, [
    { keyId: 'KEYAAAAAAAAA', address: '203.0.113.1', lastSeen: new Date('2026-11-26T10:00:01Z') },
    { keyId: 'KEYAAAAAAAAA', address: '203.0.113.2', lastSeen: new Date('2026-11-26T10:00:02Z') },
  ]);
  await counter.flush();
  assert.equal(store.batches.length, 1, 'an empty window writes nothing');
});

test('answers after a flush at UTC midnight count on the new day', async () => {
  const store = new RecordingStore();
  const clock = { now: Date.parse('2026-11-26T23:59:59Z') };
  const counter = counterOver(store, clock);
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  clock.now = Date.parse('2026-11-27T00:00:00Z');
  await counter.flush();
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  await counter.flush();
  assert.deepEqual(
    store.batches.flatMap((batch) => batch.counts.map((row) => row.day)),
    ['2026-11-26', '2026-11-27'],
  );
});

test('a failed write is kept and added to the next flush, so nothing counted is lost while the store is away', async () => {
  const store = new RecordingStore();
  const clock = { now: Date.parse('2026-11-26T10:00:00Z') };
  const warnings: string[] = [];
  const counter = counterOver(store, clock, warnings);
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  store.failures = 1;
  await counter.flush();
  assert.equal(store.batches.length, 0);
  assert.equal(warnings.length, 1, 'the failure is logged');
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  await counter.flush();
  assert.deepEqual(store.batches[0]!.counts, [{ keyId: 'KEYAAAAAAAAA', day: '2026-11-26', outcome: 'success', count: 3 }]);
  assert.equal(store.batches[0]!.addresses.length, 1, 'one address, seen in both windows, written once');
});

test('stop writes what is left, and a key seen from many addresses keeps only its latest few', async () => {
  const store = new RecordingStore();
  const clock = { now: Date.parse('2026-11-26T10:00:00Z') };
  const counter = counterOver(store, clock);
  counter.start();
  for (let i = 1; i <= 9; i++) {
    clock.now += 1000;
    counter.count('KEYAAAAAAAAA', 200, `203.0.113.${i}`);
  }
  await counter.stop();
  const addresses = store.batches[0]!.addresses.map((seen) => seen.address);
  assert.ok(addresses.length <= 6, `kept ${addresses.length} addresses`);
  assert.ok(addresses.includes('203.0.113.9') && addresses.includes('203.0.113.5'), `the latest five are kept: ${addresses.join(', ')}`);
  assert.equal(store.batches[0]!.counts[0]!.count, 9);
});

test('the timer flushes at UTC midnight, not only every interval, so a window never spans two days', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const store = new RecordingStore();
  const clock = { now: Date.parse('2026-11-26T23:59:58Z') };
  const counter = counterOver(store, clock);
  counter.start();
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  // Two seconds to midnight, well inside the 10 s interval: the timer fires just past midnight.
  clock.now = Date.parse('2026-11-27T00:00:00.005Z');
  t.mock.timers.tick(2005);
  counter.count('KEYAAAAAAAAA', 200, '203.0.113.1');
  clock.now += 10_000;
  t.mock.timers.tick(10_000);
  await counter.stop();
  assert.deepEqual(
    store.batches.flatMap((batch) => batch.counts.map((row) => `${row.day} ${row.count}`)),
    ['2026-11-26 1', '2026-11-27 1'],
  );
});
