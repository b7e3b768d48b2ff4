// serve's background job: deletes usage days past KEY_USAGE_RETENTION_DAYS, once the store serves and then every hour.
import type { Store } from '../store/store.ts';
import { pruneKeyUsage } from './key-usage.ts';

export interface KeyUsagePruningOptions {
  readonly store: Store;
  readonly retentionDays: number;
  /** Resolves when the store first serves (at once unless PostgreSQL was down at start). */
  readonly storeReady: Promise<unknown>;
  readonly log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  readonly intervalMs?: number;
}

const HOURLY = 3_600_000;

/** Starts pruning on every serving process (a second DELETE of the same old rows deletes nothing); returns the function that stops it. */
export function startKeyUsagePruning(options: KeyUsagePruningOptions): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const prune = () => {
    if (stopped) return;
    pruneKeyUsage(options.store, options.retentionDays).then(
      (deleted) => {
        if (deleted > 0) options.log.info({ deleted, retentionDays: options.retentionDays }, 'key usage past retention deleted');
      },
      // A database down for a moment: the next round tries again.
      (error: unknown) => options.log.warn({ err: error }, 'could not prune key usage'),
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
