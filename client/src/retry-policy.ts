// When to retry a call and how long to wait first: 429/503 always, network failures only when repeating is safe; backoff with jitter.

export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly retries: number;
  /** First backoff step; each later step doubles it. */
  readonly baseDelayMs: number;
  /** No wait is longer than this, whatever Retry-After asks. */
  readonly maxDelayMs: number;
}

/** What the last attempt ended with, as far as retrying cares. */
export type Outcome =
  /** `code`: the failure's first code, when the answer has one (a 409 is retried only when it is idempotency_key_in_use). */
  | { readonly kind: 'answer'; readonly status: number; readonly code?: string }
  | { readonly kind: 'no-answer' };

/**
 * 429 and 503 mean the server did not act on the request, so any method may repeat it. Without an answer the server may
 * have acted, so only a call that is safe to repeat is: a GET (which changes nothing), or a POST with an Idempotency-Key
 * (whose repeat gets the first answer and changes nothing twice). For such a POST a 409 means its first attempt still runs
 * (idempotency_key_in_use): it is repeated too, to get that attempt's answer. Any other status, 4xx above all, is final, and
 * so is a 409 with another code (the admin port's username_taken, key_inactive...: repeating it cannot change it).
 */
export function isRetryable(method: string, outcome: Outcome, idempotent: boolean = method === 'GET'): boolean {
  if (outcome.kind === 'no-answer') return idempotent;
  const inUse = outcome.status === 409 && (outcome.code === undefined || outcome.code === 'idempotency_key_in_use');
  return outcome.status === 429 || outcome.status === 503 || (inUse && idempotent && method !== 'GET');
}

/**
 * The wait before retry number `retry` (0 for the first): exponential backoff with "equal jitter" (between half and all
 * of the step), never shorter than the server's Retry-After, never longer than `maxDelayMs`.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number, retryAfterSeconds: number | undefined, random: () => number = Math.random): number {
  const step = policy.baseDelayMs * 2 ** retry;
  const backoff = step / 2 + (random() * step) / 2;
  const asked = retryAfterSeconds === undefined ? 0 : retryAfterSeconds * 1000;
  return Math.round(Math.min(policy.maxDelayMs, Math.max(backoff, asked)));
}

/** Retry-After as seconds: delta-seconds, or an HTTP date (counted from `now`); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
