// serve's background job: deletes audit entries past their retention, once the store serves and then every hour.
import type { Store } from '../store/store.ts';
import { pruneAudit } from './audit.ts';
import { startPeriodicPruning, type PruningLog } from './periodic-pruning.ts';

export interface AuditPruningOptions {
  readonly store: Store;
  readonly retentionDays: number;
  /** Resolves when the store first serves (at once unless PostgreSQL was down at start). */
  readonly storeReady: Promise<unknown>;
  readonly log: PruningLog;
  readonly intervalMs?: number;
}

/** Starts pruning; returns the function that stops it. */
export function startAuditPruning(options: AuditPruningOptions): () => void {
  return startPeriodicPruning({
    ...options,
    prune: () => pruneAudit(options.store, options.retentionDays),
    fields: { retentionDays: options.retentionDays },
    deletedMessage: 'audit entries past retention deleted',
    failedMessage: 'could not prune the audit trail',
  });
}
