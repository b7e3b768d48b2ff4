// serve's background job: deletes console sessions past their idle or absolute lifetime, once the store serves, then hourly.
import type { ConsoleSessionStore } from '../store/console-sessions/console-session-store.ts';
import { startPeriodicPruning, type PruningLog } from './periodic-pruning.ts';

export interface ConsoleSessionPruningOptions {
  readonly store: ConsoleSessionStore;
  readonly idleMs: number;
  readonly maxMs: number;
  readonly storeReady: Promise<unknown>;
  readonly log: PruningLog;
  readonly intervalMs?: number;
}

/**
 * A dead session is already refused on its next request (src/console/sessions.ts); this only keeps the table to the live
 * ones, for sessions whose browser never came back. Returns the function that stops it.
 */
export function startConsoleSessionPruning(options: ConsoleSessionPruningOptions, now: () => number = Date.now): () => void {
  return startPeriodicPruning({
    ...options,
    prune: () => options.store.pruneConsoleSessions(new Date(now() - options.maxMs), new Date(now() - options.idleMs)),
    fields: {},
    deletedMessage: 'ended console sessions deleted',
    failedMessage: 'could not prune console sessions',
  });
}
