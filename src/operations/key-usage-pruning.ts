// serve's background job: deletes usage days past KEY_USAGE_RETENTION_DAYS, once the store serves and then every hour.
import type { Store } from '../store/store.ts';
import { pruneKeyUsage } from './key-usage.ts';
import { startPeriodicPruning, type PruningLog } from './periodic-pruning.ts';

export interface KeyUsagePruningOptions {
  readonly store: Store;
  readonly retentionDays: number;
  /** Resolves when the store first serves (at once unless PostgreSQL was down at start). */
  readonly storeReady: Promise<unknown>;
  readonly log: PruningLog;
  readonly intervalMs?: number;
}

/** Starts pruning on every serving process (a second DELETE of the same old rows deletes nothing); returns the function that stops it. */
export function startKeyUsagePruning(options: KeyUsagePruningOptions): () => void {
  return startPeriodicPruning({
    ...options,
    prune: () => pruneKeyUsage(options.store, options.retentionDays),
    fields: { retentionDays: options.retentionDays },
    deletedMessage: 'key usage past retention deleted',
    failedMessage: 'could not prune key usage',
  });
}
