// Connects to Redis (shared rate-limit counters) so that an outage fails fast and a restart heals by itself.
import type { Redis } from 'ioredis';
import type { RedisSettings } from '../config.ts';

export interface RedisLogger {
  warn(details: object, message: string): void;
}

/** How long start-up waits for Redis before serving anyway (answering 503 where Redis is needed until it comes). */
const READY_WAIT_MS = 3000;

export async function openRedis(settings: RedisSettings, log: RedisLogger): Promise<Redis> {
  // Loaded only when REDIS_URL is set: ioredis adds memory to every process and time to every start that does not use it.
  const { Redis } = await import('ioredis');
  const redis = new Redis(settings.url, {
    // Commands fail at once while disconnected instead of queueing: a caller gets 503 now, not a hang.
    enableOfflineQueue: false,
    // Commands issued in the same event-loop turn leave in one write: under load many requests' scripts share a round trip,
    // and a cold read's refund and charge travel together. Figures: docs/operations.md (the credential lookup).
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // Reconnect quickly and keep trying forever: recovery within a second of Redis's return.
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
  });
  let lastWarning = 0;
  redis.on('error', (error: Error) => {
    // One line a second at most while Redis is down, not one per reconnect attempt.
    const now = Date.now();
    if (now - lastWarning < 1000) return;
    lastWarning = now;
    log.warn({ err: { message: error.message } }, 'redis unavailable');
  });
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, READY_WAIT_MS);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}
