// serve's background pruning: one round once the store serves, then one every hour, each logged; shared by every kind kept
// for a retention (the audit trail, usage per key).

export interface PruningLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface PeriodicPruningOptions {
  /** Resolves when the store first serves (at once unless PostgreSQL was down at start). */
  readonly storeReady: Promise<unknown>;
  readonly log: PruningLog;
  readonly intervalMs?: number;
  /** One round: resolves with how many it deleted. */
  readonly prune: () => Promise<number>;
  /** Logged with a round's count. */
  readonly fields: object;
  readonly deletedMessage: string;
  readonly failedMessage: string;
}

const HOURLY = 3_600_000;

/** Starts pruning; returns the function that stops it. Its timer is unref'd: it never keeps a process alive. */
export function startPeriodicPruning(options: PeriodicPruningOptions): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const prune = () => {
    if (stopped) return;
    options.prune().then(
      (deleted) => {
        if (deleted > 0) options.log.info({ deleted, ...options.fields }, options.deletedMessage);
      },
      // A database down for a moment: the next round tries again; a row kept an hour longer harms nobody.
      (error: unknown) => options.log.warn({ err: error }, options.failedMessage),
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
