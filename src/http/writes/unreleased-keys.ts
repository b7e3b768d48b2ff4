// Idempotency-Key claims whose release failed (the store down or read-only as the request ended): kept per app and released
// once the store answers, so a retry after a 5xx runs again instead of meeting 409 until the lease ends.
import type { FastifyBaseLogger } from 'fastify';
import type { HeldIdempotencyKey, IdempotencyStore } from '../../store/store.ts';

/** First retry, then doubling to the last: the store's own reconnect back-off (0.25 s to 5 s) answers on the same scale. */
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 2_000;
/** Bounded: past it the oldest are forgotten, and their leases free them. */
const MAX_UNRELEASED = 10_000;

interface Unreleased {
  readonly held: HeldIdempotencyKey;
  /** Past it the claim is free anyway (its lease), and another request may hold the key with its own token. */
  readonly leaseEndsAt: number;
  readonly log: FastifyBaseLogger;
}

export interface UnreleasedKeys {
  /** A claim whose request has ended (answered) but whose release failed: released in the background from now on. */
  keep(held: HeldIdempotencyKey, leaseEndsAt: number, log: FastifyBaseLogger): void;
  /** Releases this instance's unreleased claim of the owner's key now, if it has one; true when it did (then claim again). */
  releaseNow(owner: HeldIdempotencyKey): Promise<boolean>;
  /** The app closes: no more retries (the leases free what is left). */
  close(): void;
}

function idOf(held: Pick<HeldIdempotencyKey, 'accountId' | 'adminTokenId' | 'key'>): string {
  return JSON.stringify([held.accountId ?? null, held.adminTokenId ?? null, held.key]);
}

/**
 * Only claims whose request has been answered are kept here, so releasing one never frees a key a request still works
 * under; and a release deletes the claim only while it is still this token's and unanswered (the store's condition), so a
 * release that comes late is harmless: the key was taken over or answered in between.
 */
export function unreleasedKeys(store: Pick<IdempotencyStore, 'releaseIdempotencyKey'>, now: () => number = Date.now): UnreleasedKeys {
  const waiting = new Map<string, Unreleased>();
  let timer: NodeJS.Timeout | undefined;
  let delayMs = FIRST_RETRY_MS;
  let closed = false;

  const schedule = () => {
    if (closed || timer !== undefined || waiting.size === 0) return;
    timer = setTimeout(() => void retry(), delayMs);
    // A pending release never keeps a stopping process alive: the lease frees the key anyway.
    timer.unref();
  };

  /** One pass over the waiting claims, oldest first; the first failure ends it (the store is still down) and backs off. */
  const retry = async () => {
    timer = undefined;
    for (const [id, unreleased] of waiting) {
      if (closed) return;
      if (unreleased.leaseEndsAt <= now()) {
        waiting.delete(id);
        continue;
      }
      try {
        await store.releaseIdempotencyKey(unreleased.held);
      } catch {
        delayMs = Math.min(delayMs * 2, LAST_RETRY_MS);
        schedule();
        return;
      }
      if (waiting.get(id) === unreleased) waiting.delete(id);
      unreleased.log.info('idempotency key released, the store answering again');
    }
    delayMs = FIRST_RETRY_MS;
    schedule();
  };

  return {
    keep(held, leaseEndsAt, log) {
      const id = idOf(held);
      waiting.delete(id);
      waiting.set(id, { held, leaseEndsAt, log });
      if (waiting.size > MAX_UNRELEASED) waiting.delete(waiting.keys().next().value!);
      schedule();
    },

    async releaseNow(owner) {
      const id = idOf(owner);
      const unreleased = waiting.get(id);
      if (unreleased === undefined) return false;
      await store.releaseIdempotencyKey(unreleased.held);
      if (waiting.get(id) === unreleased) waiting.delete(id);
      return true;
    },

    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      waiting.clear();
    },
  };
}
