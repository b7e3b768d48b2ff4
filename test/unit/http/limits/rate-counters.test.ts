// The in-process fixed-window counters: counting, windows ending, and memory staying bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LocalCounters } from '../../../../src/http/limits/rate-counters.ts';

function clock(start = 1_000_000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

test('counts hits per key within a window and reports the time left', () => {
  const time = clock();
  const counters = new LocalCounters(60_000, { now: time.now });
  const started = time.state.now;
  assert.deepEqual(counters.hit('a'), { current: 1, resetMs: 60_000, window: started });
  time.state.now += 1_500;
  assert.deepEqual(counters.hit('a'), { current: 2, resetMs: 58_500, window: started });
  assert.deepEqual(counters.hit('b'), { current: 1, resetMs: 60_000, window: started + 1_500 }, 'keys do not share a count');
  assert.deepEqual(counters.peek('a'), { current: 2, resetMs: 58_500, window: started });
  assert.deepEqual(counters.peek('a'), { current: 2, resetMs: 58_500, window: started }, 'peek counted a hit');
});

test('a window that has ended starts again from one', () => {
  const time = clock();
  const counters = new LocalCounters(1_000, { now: time.now });
  counters.hit('a');
  counters.hit('a');
  time.state.now += 1_000;
  assert.deepEqual(counters.peek('a'), { current: 0, resetMs: 1_000, window: time.state.now });
  assert.deepEqual(counters.hit('a'), { current: 1, resetMs: 1_000, window: time.state.now });
});

test('peek of an unknown key reports nothing counted and a whole window', () => {
  const counters = new LocalCounters(60_000);
  assert.deepEqual({ ...counters.peek('nobody'), window: 0 }, { current: 0, resetMs: 60_000, window: 0 });
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

test('a spent budget stays spent when a flood of new keys pushes its window out of memory', () => {
  const time = clock();
  const counters = new LocalCounters(60_000, { now: time.now, maxKeys: 100 });
  for (let i = 0; i < 50; i++) counters.hit('victim-of-its-own-guessing');
  for (let i = 0; i < 10_000; i++) {
    counters.hit(`flood${i}`);
    if (i % 100 === 0) time.state.now += 1;
  }
  assert.equal(counters.peek('victim-of-its-own-guessing').current, 0, 'the window should have been dropped from memory');
  const next = counters.hit('victim-of-its-own-guessing');
  assert.ok(next.current >= 51, `after its window was dropped the key counted ${next.current}, a fresh budget`);
  assert.ok(counters.size <= 100, `${counters.size} windows kept`);
});

test('what dropped windows counted is forgotten once their window could have ended', () => {
  const time = clock();
  const counters = new LocalCounters(1_000, { now: time.now, maxKeys: 10 });
  for (let i = 0; i < 30; i++) counters.hit('busy');
  for (let i = 0; i < 100; i++) counters.hit(`flood${i}`);
  time.state.now += 2_000;
  assert.equal(counters.hit('busy').current, 1, 'a count from two windows ago still weighed on a new window');
});

test('refund gives back one hit of the window it was counted in, never below zero, never a later window', () => {
  const time = clock();
  const counters = new LocalCounters(1_000, { now: time.now });
  const first = counters.hit('a');
  counters.hit('a');
  counters.refund('a', first.window);
  assert.equal(counters.peek('a').current, 1);
  counters.refund('a', first.window);
  counters.refund('a', first.window);
  assert.equal(counters.peek('a').current, 0, 'a refund went below zero');
  counters.refund('nobody', first.window);
  assert.equal(counters.size, 1, 'a refund opened a window');
  const spent = counters.hit('a');
  time.state.now += 1_000;
  counters.hit('a'); // a new window has begun
  counters.refund('a', spent.window);
  assert.equal(counters.peek('a').current, 1, 'a refund of the last window landed in the new one');
});

test('what one dropped window adds to the sketch is capped, so a flood of 429s cannot fill cells others share', () => {
  const time = clock();
  const counters = new LocalCounters(60_000, { now: time.now, maxKeys: 10, countCeiling: 21 });
  for (let i = 0; i < 10_000; i++) counters.hit('flooder');
  for (let i = 0; i < 50; i++) counters.hit(`other${i}`);
  assert.equal(counters.hit('flooder').current, 22, 'the dropped window came back with more than budget + 1 (plus this hit)');
});
