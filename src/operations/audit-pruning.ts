// serve's background job: deletes audit entries past their retention, once the store serves and then every hour.
import type { Store } from '../store/store.ts';
import { pruneAudit } from './audit.ts';

export interface AuditPruningOptions {
  readonly store: Store;
  readonly retentionDays: number;
  /** Resolves when the store first serves (at once unless PostgreSQL was down at start). */
  readonly storeReady: Promise<unknown>;
  readonly log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  readonly intervalMs?: number;
}

const HOURLY = 3_600_000;

/** Starts pruning; returns the function that stops it. Its timer is unref'd: it never keeps a process alive. */
export function startAuditPruning(options: AuditPruningOptions): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const prune = () => {
    if (stopped) return;
    pruneAudit(options.store, options.retentionDays).then(
      (deleted) => {
        if (deleted > 0) options.log.info({ deleted, retentionDays: options.retentionDays }, 'audit entries past retention deleted');
      },
      // A database down for a moment: the next round tries again; an entry kept an hour longer harms nobody.
      (error: unknown) => options.log.warn({ err: error }, 'could not prune the audit trail'),
    );
  };
  options.storeReady.then(
    () => {
      if (stopped) return;
      prune();
      timer = setInterval(prune, options.intervalMs ?? HOURLY);
      timer.unref();
    },
    () => undefined, // serve reports a store that never serves
  );
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
