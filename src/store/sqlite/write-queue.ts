// Group commit for SQLite: the writes asked for during one turn of the event loop are committed in one transaction, and a
// batch that finds the database locked by another connection waits for it on timers, never on the event loop.
import { pauseBeforeAttempt } from './lock-wait.ts';
import { isBusy, translate } from './sqlite-errors.ts';

export interface QueuedWrite {
  /** performance.now() past which a still locked database fails this write; 0 until an attempt first finds it locked. */
  deadline: number;
  /** Answers the caller with a failure; nothing of the write was kept. */
  fail(error: unknown): void;
  /** Told each time its batch finds the database locked: a write whose caller must not wait for the lock answers here. */
  readonly locked?: () => void;
}

/**
 * One transaction (one fsync with synchronous=FULL) makes a whole batch durable instead of one write each. `commit` runs
 * the transaction and answers every write of the batch only after COMMIT has returned, so nothing acknowledged can be
 * lost; when it throws, the transaction was rolled back and nobody was answered. While one COMMIT waits for the disk the
 * event loop is blocked and the next requests queue up in the kernel: the busier the server, the larger the batches.
 *
 * SQLITE_BUSY (another process holds the write lock) keeps the batch queued and tries again on a timer; writes asked for
 * meanwhile join it. Each write waits at most `busyTimeoutMs` from the attempt that first found the lock taken, then fails
 * alone with store_busy. No timer and no promise beyond the callers' own is made while nothing contends.
 */
export class WriteQueue<W extends QueuedWrite> {
  readonly #busyTimeoutMs: number;
  readonly #commit: (batch: readonly W[]) => void;
  #queued: W[] = [];
  /** Attempts in a row that found the database locked: the next pause grows with them. */
  #lockedAttempts = 0;
  #retry: NodeJS.Timeout | undefined = undefined;
  #whenEmpty: (() => void)[] = [];

  constructor(busyTimeoutMs: number, commit: (batch: readonly W[]) => void) {
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#commit = commit;
  }

  /** True while a batch waits for another connection's lock: a write added now waits with it. */
  get waitingForLock(): boolean {
    return this.#retry !== undefined;
  }

  add(write: W): void {
    this.#queued.push(write);
    // A flush is scheduled exactly while the queue holds something: only the first write of an empty queue schedules one.
    if (this.#queued.length === 1) setImmediate(this.#flush);
  }

  /** Resolves once every write added so far has been committed or has failed. */
  drained(): Promise<void> {
    if (this.#queued.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#whenEmpty.push(resolve));
  }

  readonly #flush = (): void => {
    this.#retry = undefined;
    const batch = this.#queued;
    this.#queued = [];
    try {
      this.#commit(batch);
      this.#lockedAttempts = 0;
    } catch (error) {
      if (isBusy(error)) {
        this.#waitForLock(batch, error);
      } else {
        const failure = translate(error);
        for (const write of batch) write.fail(failure);
      }
    }
    if (this.#queued.length === 0) {
      const waiting = this.#whenEmpty;
      this.#whenEmpty = [];
      for (const resolve of waiting) resolve();
    }
  };

  #waitForLock(batch: readonly W[], error: unknown): void {
    const now = performance.now();
    let failure: unknown;
    let earliestDeadline = Infinity;
    for (const write of batch) {
      if (write.deadline === 0) write.deadline = now + this.#busyTimeoutMs;
      if (write.deadline <= now) {
        failure ??= translate(error);
        write.fail(failure);
        continue;
      }
      write.locked?.();
      this.#queued.push(write);
      earliestDeadline = Math.min(earliestDeadline, write.deadline);
    }
    if (this.#queued.length === 0) {
      this.#lockedAttempts = 0;
      return;
    }
    // The next attempt comes no later than the first deadline, so store_busy is answered on time, after a last try.
    this.#retry = setTimeout(this.#flush, Math.min(pauseBeforeAttempt(this.#lockedAttempts++), earliestDeadline - now));
  }
}
