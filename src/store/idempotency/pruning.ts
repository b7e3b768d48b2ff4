// Deletes expired idempotency keys in the background, on every instance (a DELETE of what has expired is safe to run twice).
import { isDomainError } from '../../domain/errors.ts';
import type { Store } from '../store.ts';

/** Often enough that expired keys never pile up; each run is one indexed DELETE. */
export const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

export interface PruneLog {
  warn(fields: object, message: string): void;
}

/** Starts pruning every `intervalMs`, on a timer that never keeps the process alive; returns the function that stops it. */
export function pruneIdempotencyKeysEvery(store: Store, intervalMs: number, log: PruneLog): () => void {
  const timer = setInterval(() => {
    store.pruneIdempotencyKeys().catch((error: unknown) => {
      // The database is away (503s say so already): the next run prunes what this one could not.
      if (isDomainError(error) && error.kind === 'unavailable') return;
      log.warn({ err: error }, 'pruning expired idempotency keys failed');
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
