// When a failed delivery is tried again: the configured delays, each stretched or shrunk by up to a fifth at random.

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/**
 * The waits after the first attempt (which is made as soon as the event is written): 11 attempts over 4 days 3 hours,
 * past the 3 days the issue asks for. WEBHOOK_RETRY_SCHEDULE replaces it (docs/api.md, "Retries").
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H, 24 * H];

/** A 2xx within this is a success; the issue fixes it, so it is not a setting (a lease must outlast it: config.ts). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Jitter: receivers that failed together are not all knocked on again in the same second. */
const JITTER = 0.2;

/**
 * The next attempt after `attemptsMade` attempts (the one just failed included), or null when the schedule is spent.
 */
export function nextAttemptAt(schedule: readonly number[], attemptsMade: number, now: Date, random: () => number = Math.random): Date | null {
  const delay = schedule[attemptsMade - 1];
  if (delay === undefined) return null;
  const jittered = delay * (1 - JITTER + 2 * JITTER * random());
  return new Date(now.getTime() + Math.round(jittered));
}

/** What of the last attempt the reason names: the store's AttemptOutcome has these, and this module stays below the store. */
export interface LastAttempt {
  readonly attemptedAt: Date;
  readonly status: number | null;
  readonly error: string | null;
}

/** What an operator reads in `webhooks list` when an endpoint was disabled for failing. */
export function failureReason(since: string, outcome: LastAttempt): string {
  const last = outcome.status === null ? (outcome.error ?? 'no answer') : `HTTP ${outcome.status}`;
  return `every delivery failed since ${since}; the last: ${last} at ${outcome.attemptedAt.toISOString()}`;
}
