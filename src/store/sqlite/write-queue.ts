// Group commit for SQLite: one turn's writes in one transaction; a locked database is waited for on timers, not the loop.
import { pauseBeforeAttempt } from './lock-wait.ts';
import { isBusy, translate } from './sqlite-errors.ts';

export interface QueuedWrite {
  /** performance.now() past which a locked database fails this write; 0 until first found locked. */
  deadline: number;
  /** Nothing of the write was kept. */
  fail(error: unknown): void;
  /** For a write whose caller must not wait for the lock. */
  readonly locked?: () => void;
}

/**
 * One fsync per batch. Every write is answered only after COMMIT returns, so nothing acknowledged is lost; while COMMIT waits
 * for the disk requests queue in the kernel, so the busier the server, the larger the batches. SQLITE_BUSY keeps the batch
 * queued on a timer (new writes join it); each write fails alone with store_busy after `busyTimeoutMs` of lock.
 */
export class WriteQueue<W extends QueuedWrite> {
  readonly #busyTimeoutMs: number;
  readonly #commit: (batch: readonly W[]) => void;
  #queued: W[] = [];
  #lockedAttempts = 0;
  #retry: NodeJS.Timeout | undefined = undefined;
  #whenEmpty: (() => void)[] = [];

  constructor(busyTimeoutMs: number, commit: (batch: readonly W[]) => void) {
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#commit = commit;
  }

  get waitingForLock(): boolean {
    return this.#retry !== undefined;
  }

  add(write: W): void {
    this.#queued.push(write);
    // Only the first write of an empty queue schedules the flush.
    if (this.#queued.length === 1) setImmediate(this.#flush);
  }

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
