// Catches SIGTERM and SIGINT from the very start of `serve`, holding one that arrives before the process can act on it.

export interface SignalCatcher {
  /** A signal caught before any handler was set, if any. */
  readonly pending: NodeJS.Signals | null;
  /** From now on signals go to `act`; a signal already caught is acted on at once. */
  handleWith(act: (signal: NodeJS.Signals) => void): void;
  /** Stops catching: the default behaviour of the signals returns. */
  release(): void;
}

export function catchSignals(): SignalCatcher {
  let pending: NodeJS.Signals | null = null;
  let act = (signal: NodeJS.Signals) => {
    pending = signal;
  };
  const handler = (signal: NodeJS.Signals) => act(signal);
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    get pending() {
      return pending;
    },
    handleWith(next) {
      act = next;
      if (pending !== null) next(pending);
    },
    release() {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}
