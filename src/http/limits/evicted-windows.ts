// What rate windows dropped at the memory cap had counted, kept so that dropping one never hands its client a fresh budget.
//
// A count-min sketch (the smallest of a key's cells in several hashed rows): it can over-count, never under-count, in fixed
// memory whatever the flood. Counts age out in two generations: kept at least one whole window, at most two.

import { randomBytes } from 'node:crypto';

const ROWS = 4;

/** FNV-1a with a per-row seed, then murmur3's fmix32 to spread the low bits. */
function cell(key: string, seed: number, mask: number): number {
  let hash = seed;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash & mask;
}

export class EvictedWindows {
  readonly #windowMs: number;
  readonly #width: number;
  // Secret and new per process: known seeds would let an attacker pick addresses sharing a victim's cells offline.
  readonly #seeds: Uint32Array;
  #current: Uint32Array;
  #previous: Uint32Array;
  #rotatedAt: number;
  #empty = true;

  /** `width`: a power of two. */
  constructor(windowMs: number, now: number, width = 16_384, seeds: Uint32Array = new Uint32Array(randomBytes(4 * ROWS).buffer)) {
    if ((width & (width - 1)) !== 0) throw new Error('width must be a power of two');
    this.#windowMs = windowMs;
    this.#width = width;
    this.#seeds = seeds;
    this.#current = new Uint32Array(ROWS * width);
    this.#previous = new Uint32Array(ROWS * width);
    this.#rotatedAt = now;
  }

  add(key: string, count: number, now: number): void {
    this.#age(now);
    const mask = this.#width - 1;
    for (let row = 0; row < ROWS; row++) {
      const index = row * this.#width + cell(key, this.#seeds[row]!, mask);
      this.#current[index] = Math.min(0xffffffff, this.#current[index]! + count);
    }
    this.#empty = false;
  }

  /** Within the last window; 0 when nothing was ever dropped. */
  estimate(key: string, now: number): number {
    if (this.#empty) return 0;
    this.#age(now);
    const mask = this.#width - 1;
    let least = Infinity;
    for (let row = 0; row < ROWS; row++) {
      const index = row * this.#width + cell(key, this.#seeds[row]!, mask);
      least = Math.min(least, this.#current[index]! + this.#previous[index]!);
    }
    return least;
  }

  #age(now: number): void {
    const elapsed = now - this.#rotatedAt;
    if (elapsed < this.#windowMs) return;
    if (elapsed >= 2 * this.#windowMs) {
      // All added before the last window began: none of it can still matter.
      this.#current.fill(0);
      this.#previous.fill(0);
      this.#empty = true;
    } else {
      const recycled = this.#previous;
      recycled.fill(0);
      this.#previous = this.#current;
      this.#current = recycled;
    }
    this.#rotatedAt = now;
  }
}
