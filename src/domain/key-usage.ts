// What a key's usage is made of: the outcome of an answer, the UTC day it falls on, and how much of it is kept and shown.

/** Every outcome an answer to a key's request can have, in the order they are counted and shown. */
export const KEY_USAGE_OUTCOMES = ['success', 'client_error', 'rate_limited', 'refused', 'server_error'] as const;
export type KeyUsageOutcome = (typeof KEY_USAGE_OUTCOMES)[number];

/** The most recent distinct addresses kept per key. */
export const KEY_USAGE_ADDRESSES = 5;
/** The days GET .../usage answers: today and the 29 before it. */
export const KEY_USAGE_DAYS_SHOWN = 30;

/**
 * An answer's outcome, as an index into KEY_USAGE_OUTCOMES: 2xx and 3xx succeed; 429 is the rate limit; 401 and 403 refuse
 * (a revoked or expired key, a non-Premium account, a read-only key writing); any other 4xx is the client's mistake; 5xx ours.
 */
export function outcomeIndex(status: number): number {
  if (status < 400) return 0;
  if (status >= 500) return 4;
  if (status === 429) return 2;
  if (status === 401 || status === 403) return 3;
  return 1;
}

const DAY_MS = 86_400_000;

/** The UTC day of `ms` as YYYY-MM-DD. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The instant the UTC day after `ms` begins. */
export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

/** The UTC day `days` before the day of `ms`. */
export function utcDayBefore(ms: number, days: number): string {
  return utcDay(ms - days * DAY_MS);
}
