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
 * Runs `work` again, on a timer, each time SQLite answers SQLITE_BUSY, until it succeeds or `timeoutMs` has passed; the
 * caller has just tried once and found the database locked. Gives up with store_busy. `work` must be safe to repeat: a
 * statement that got SQLITE_BUSY did nothing, and a transaction that got it was rolled back.
 */
export function retryWhileLocked<T>(work: () => T, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    let attempt = 0;
    const tryAgain = (): void => {
      try {
        resolve(work());
      } catch (error) {
        const left = deadline - performance.now();
        if (!isBusy(error) || left <= 0) reject(translate(error));
        else setTimeout(tryAgain, Math.min(pauseBeforeAttempt(attempt++), left));
      }
    };
    setTimeout(tryAgain, Math.min(pauseBeforeAttempt(attempt++), timeoutMs));
  });
}
