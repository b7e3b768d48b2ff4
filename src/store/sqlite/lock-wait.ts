// Waiting for a lock held by another SQLite connection on timers, so that the event loop serves other requests meanwhile.
// node:sqlite's own busy timeout sleeps on the main thread: a lock held for 8 s by the CLI, sqlite3 or a backup froze every answer.
import { isBusy, translate } from './sqlite-errors.ts';

/** Another worker's commit holds the lock about a millisecond, so the first pauses are short; past that, this often. */
const LONGEST_PAUSE_MS = 20;

/** The pause before attempt `attempt + 1` (0 after the first failure): 1, 2, 4, 8, 16, 20, 20... ms. */
export function pauseBeforeAttempt(attempt: number): number {
  return Math.min(LONGEST_PAUSE_MS, 2 ** attempt);
}

/**
 * Runs `work` again, on a timer, each time SQLite answers SQLITE_BUSY, until it succeeds or an attempt begun once `timeoutMs`
 * had passed fails too; the caller has just tried once and found the database locked. Gives up with store_busy. The last
 * attempt is the first begun at or past the deadline (timers may fire a moment early; an attempt begun before it is followed
 * by another), so a lock released just as the time runs out is still taken. `work` must be safe to repeat: a statement that
 * got SQLITE_BUSY did nothing, and a transaction that got it was rolled back.
 */
export function retryWhileLocked<T>(work: () => T, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    let attempt = 0;
    const tryAgain = (): void => {
      const begun = performance.now();
      try {
        resolve(work());
      } catch (error) {
        if (!isBusy(error) || begun >= deadline) reject(translate(error));
        else setTimeout(tryAgain, Math.min(pauseBeforeAttempt(attempt++), Math.max(0, deadline - performance.now())));
      }
    };
    setTimeout(tryAgain, Math.min(pauseBeforeAttempt(attempt++), timeoutMs));
  });
}
