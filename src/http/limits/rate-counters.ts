// Fixed-window request counters: in this process, or in Redis so that every instance shares them.
//
// Written here rather than taken from @fastify/rate-limit (used until issue 6): the budgets need only "count one hit" and
// "read the count", and that plugin's general per-call machinery (async key generators, allow lists, promise wrapping)
// was paid on every request. Figures: docs/operations.md#smaller-measured-choices
import type { Redis } from 'ioredis';
import { EvictedWindows } from './evicted-windows.ts';

export interface WindowCount {
  /** Hits in the current window, this one included. */
  readonly current: number;
  /** Milliseconds until the window ends; the whole window when none has started. */
  readonly resetMs: number;
  /** Names the window that was counted in, so a refund can never land in the next one. */
  readonly window: number;
}

export interface RateCounters {
  /** Counts one hit against `key` and returns the window's count. */
  hit(key: string): WindowCount | Promise<WindowCount>;
  /** The window's count without counting. */
  peek(key: string): WindowCount | Promise<WindowCount>;
  /** Gives back one hit counted earlier (a reservation that was not needed), if its window is still the current one. */
  refund(key: string, window: number): void | Promise<void>;
}

interface Window {
  count: number;
  readonly startedAt: number;
}

const SWEEP_INTERVAL_MS = 1000;

/** Per process. Windows live in a Map in the order they started, so expired ones are swept from its front. */
export class LocalCounters implements RateCounters {
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #countCeiling: number;
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;
  #sweptAt = 0;
  // Made when the cap first drops a live window: what such windows had counted, so their clients start no lower.
  #evicted: EvictedWindows | null = null;

  /**
   * `maxKeys`: past it, the oldest windows are dropped even unexpired (memory stays bounded under address churn), and what
   * they had counted is kept in a fixed-size sketch that never under-counts: dropping a window never refills a budget.
   * `countCeiling`: what a dropped window adds to the sketch at most (the budget plus one: past it, more says nothing),
   * so a flood of 429s from a few keys cannot fill the cells they share with others.
   */
  constructor(windowMs: number, options: { maxKeys?: number; countCeiling?: number; now?: () => number } = {}) {
    this.#windowMs = windowMs;
    this.#countCeiling = options.countCeiling ?? Number.MAX_SAFE_INTEGER;
    this.#maxKeys = options.maxKeys ?? 20_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#windows.size;
  }

  hit(key: string): WindowCount {
    const now = this.#now();
    let window = this.#windows.get(key);
    if (window === undefined || now - window.startedAt >= this.#windowMs) {
      if (window !== undefined) this.#windows.delete(key); // re-inserted at the back: the Map stays in start order
      else if (now - this.#sweptAt >= SWEEP_INTERVAL_MS || this.#windows.size >= this.#maxKeys) this.#sweep(now);
      window = { count: this.#evicted === null ? 0 : this.#evicted.estimate(key, now), startedAt: now };
      this.#windows.set(key, window);
    }
    window.count++;
    return { current: window.count, resetMs: window.startedAt + this.#windowMs - now, window: window.startedAt };
  }

  peek(key: string): WindowCount {
    const now = this.#now();
    const window = this.#windows.get(key);
    if (window === undefined || now - window.startedAt >= this.#windowMs) return { current: 0, resetMs: this.#windowMs, window: now };
    return { current: window.count, resetMs: window.startedAt + this.#windowMs - now, window: window.startedAt };
  }

  refund(key: string, counted: number): void {
    const window = this.#windows.get(key);
    if (window === undefined || window.startedAt !== counted || window.count === 0) return;
    if (this.#now() - window.startedAt < this.#windowMs) window.count--;
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, window] of this.#windows) {
      const live = now - window.startedAt < this.#windowMs;
      if (live && this.#windows.size < this.#maxKeys) return;
      this.#windows.delete(key);
      if (live && window.count > 0) {
        this.#evicted ??= new EvictedWindows(this.#windowMs, now);
        this.#evicted.add(key, Math.min(window.count, this.#countCeiling), now);
      }
    }
  }
}

// INCR, and the window's expiry set by its first hit: one round trip, atomic, the same answer on every instance.
const HIT_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {current, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`;

const PEEK_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return {0, -1} end
return {tonumber(current), redis.call('PTTL', KEYS[1])}
`;

// Never below zero, nothing when the window has ended (a refund must not open a window of its own), and nothing when a
// later window has begun: that one expires later than the counted one did, by more than clock slack (ARGV[1] is what
// was left of the counted window when it was counted, less the time since).
const REFUND_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current or tonumber(current) <= 0 then return 0 end
if redis.call('PTTL', KEYS[1]) > tonumber(ARGV[1]) + 250 then return 0 end
return redis.call('DECR', KEYS[1])
`;

interface CounterCommands {
  rateHit(key: string, windowMs: number): Promise<[number, number]>;
  ratePeek(key: string): Promise<[number, number]>;
  rateRefund(key: string, leftMs: number): Promise<number>;
}

/** Shared by every instance using the same Redis and key prefix. Rejects while Redis is unreachable. */
export class RedisCounters implements RateCounters {
  readonly #redis: Redis & CounterCommands;
  readonly #windowMs: number;
  readonly #prefix: string;

  constructor(redis: Redis, windowMs: number, prefix: string) {
    if (!('rateHit' in redis)) {
      redis.defineCommand('rateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
      redis.defineCommand('ratePeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
      redis.defineCommand('rateRefund', { numberOfKeys: 1, lua: REFUND_SCRIPT });
    }
    this.#redis = redis as Redis & CounterCommands;
    this.#windowMs = windowMs;
    this.#prefix = prefix;
  }

  async hit(key: string): Promise<WindowCount> {
    const [current, ttl] = await this.#redis.rateHit(this.#prefix + key, this.#windowMs);
    // The window is named by when it ends, by this process's clock: all a refund needs to tell it from the next.
    return { current, resetMs: ttl, window: Date.now() + ttl };
  }

  async peek(key: string): Promise<WindowCount> {
    const [current, ttl] = await this.#redis.ratePeek(this.#prefix + key);
    const resetMs = ttl > 0 ? ttl : this.#windowMs;
    return { current, resetMs, window: Date.now() + resetMs };
  }

  async refund(key: string, window: number): Promise<void> {
    await this.#redis.rateRefund(this.#prefix + key, Math.max(0, window - Date.now()));
  }
}
