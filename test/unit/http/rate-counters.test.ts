// The in-process fixed-window counters: counting, windows ending, and memory staying bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LocalCounters } from '../../../src/http/rate-counters.ts';

function clock(start = 1_000_000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

test('counts hits per key within a window and reports the time left', () => {
  const time = clock();
  const counters = new LocalCounters(60_000, { now: time.now });
  assert.deepEqual(counters.hit('a'), { current: 1, resetMs: 60_000 });
  time.state.now += 1_500;
  assert.deepEqual(counters.hit('a'), { current: 2, resetMs: 58_500 });
  assert.deepEqual(counters.hit('b'), { current: 1, resetMs: 60_000 }, 'keys do not share a count');
  assert.deepEqual(counters.peek('a'), { current: 2, resetMs: 58_500 });
  assert.deepEqual(counters.peek('a'), { current: 2, resetMs: 58_500 }, 'peek counted a hit');
});

test('a window that has ended starts again from one', () => {
  const time = clock();
  const counters = new LocalCounters(1_000, { now: time.now });
  counters.hit('a');
  counters.hit('a');
  time.state.now += 1_000;
  assert.deepEqual(counters.peek('a'), { current: 0, resetMs: 1_000 });
  assert.deepEqual(counters.hit('a'), { current: 1, resetMs: 1_000 });
});

test('peek of an unknown key reports nothing counted and a whole window', () => {
  const counters = new LocalCounters(60_000);
  assert.deepEqual(counters.peek('nobody'), { current: 0, resetMs: 60_000 });
  assert.equal(counters.size, 0, 'peek stored a window');
});

test('expired windows are swept as new keys arrive', () => {
  const time = clock();
  const counters = new LocalCounters(1_000, { now: time.now });
  for (let i = 0; i < 1000; i++) counters.hit(`old${i}`);
  time.state.now += 2_000;
  counters.hit('new');
  assert.equal(counters.size, 1, `${counters.size} windows kept after they all ended`);
});

test('never more than maxKeys windows, even unexpired: the oldest go first', () => {
  const time = clock();
  const counters = new LocalCounters(60_000, { now: time.now, maxKeys: 100 });
  for (let i = 0; i < 1000; i++) {
    counters.hit(`k${i}`);
    time.state.now += 1;
  }
  assert.ok(counters.size <= 100, `${counters.size} windows kept`);
  assert.equal(counters.peek('k999').current, 1, 'the newest window was dropped');
  assert.equal(counters.peek('k0').current, 0, 'the oldest window was kept');
});
