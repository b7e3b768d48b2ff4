// The sketch of dropped rate windows: its estimate is never below what was recorded within the last window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { EvictedWindows } from '../../../../src/http/limits/evicted-windows.ts';

test('never under-counts a key, whatever else shares its cells', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.string({ maxLength: 12 }), fc.integer({ min: 1, max: 1000 })), { minLength: 1, maxLength: 400 }),
      (adds) => {
        const sketch = new EvictedWindows(60_000, 0, 64); // few cells: collisions on purpose
        const truth = new Map<string, number>();
        for (const [key, count] of adds) {
          sketch.add(key, count, 10);
          truth.set(key, (truth.get(key) ?? 0) + count);
        }
        for (const [key, count] of truth) assert.ok(sketch.estimate(key, 20) >= count, `${key}: ${sketch.estimate(key, 20)} < ${count}`);
      },
    ),
    { numRuns: 200 },
  );
});

test('with room to spare, estimates are exact for most keys', () => {
  const sketch = new EvictedWindows(60_000, 0);
  for (let i = 0; i < 2000; i++) sketch.add(`198.51.100.${i}`, 3, 1);
  let exact = 0;
  for (let i = 0; i < 2000; i++) if (sketch.estimate(`198.51.100.${i}`, 2) === 3) exact++;
  assert.ok(exact >= 1990, `only ${exact} of 2000 estimates were exact`);
  assert.equal(sketch.estimate('203.0.113.1', 2) <= 3, true, 'an unseen key got a large estimate');
});

test('a count is kept for at least one whole window and gone after two', () => {
  const sketch = new EvictedWindows(1_000, 0);
  sketch.add('a', 5, 999);
  assert.equal(sketch.estimate('a', 1_500), 5, 'dropped too early: the window it came from may still run');
  assert.equal(sketch.estimate('a', 1_998), 5);
  assert.equal(sketch.estimate('a', 3_100), 0, 'kept past two windows');
  assert.equal(new EvictedWindows(1_000, 0).estimate('a', 0), 0);
});
