// Fixed-window request counters: in this process, or in Redis so that every instance shares them.
//
// Written here rather than taken from @fastify/rate-limit: its general per-call machinery was paid on every request.
// Figures: docs/operations.md#smaller-measured-choices
import type { RedisClient } from '../../store/redis-client.ts';
import { EvictedWindows } from './evicted-windows.ts';

export interface WindowCount {
  readonly current: number;
  /** The whole window when none has started. */
  readonly resetMs: number;
  /** So a refund can never land in the next window. */
  readonly window: number;
}

export interface RateCounters {
  hit(key: string): WindowCount | Promise<WindowCount>;
  peek(key: string): WindowCount | Promise<WindowCount>;
  /** Only if its window is still the current one. */
  refund(key: string, window: number): void | Promise<void>;
}

interface Window {
  count: number;
  readonly startedAt: number;
}

const SWEEP_INTERVAL_MS = 1000;

/** Windows live in a Map in start order, so expired ones are swept from its front. */
export class LocalCounters implements RateCounters {
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #countCeiling: number;
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;
  #sweptAt = 0;
  // Made when the cap first drops a live window, so its clients start no lower.
  #evicted: EvictedWindows | null = null;

  /**
   * `maxKeys`: past it the oldest windows are dropped into a sketch that never under-counts (bounded memory, no refilled
   * budget). `countCeiling`: the most a dropped window adds, so a few flooding keys cannot fill shared cells.
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

// INCR, expiry set by the first hit: one atomic round trip.
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

// Never below zero, nothing once the window ended or a later one began (it expires later by more than clock slack;
// ARGV[1] is what was left of the counted window, less the time since).
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

/** Rejects while Redis is unreachable. */
export class RedisCounters implements RateCounters {
  readonly #redis: RedisClient & CounterCommands;
  readonly #windowMs: number;
  readonly #prefix: string;

  constructor(redis: RedisClient, windowMs: number, prefix: string) {
    if (!('rateHit' in redis)) {
      redis.defineCommand('rateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
      redis.defineCommand('ratePeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
      redis.defineCommand('rateRefund', { numberOfKeys: 1, lua: REFUND_SCRIPT });
    }
    this.#redis = redis as RedisClient & CounterCommands;
    this.#windowMs = windowMs;
    this.#prefix = prefix;
  }

  async hit(key: string): Promise<WindowCount> {
    const [current, ttl] = await this.#redis.rateHit(this.#prefix + key, this.#windowMs);
    // Named by when it ends, by this process's clock: enough to tell it from the next.
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
