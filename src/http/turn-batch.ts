// Work put off to the end of the current turn of the event loop (its check phase), to run there together, in order.
//
// Performance trick. Relies on: setImmediate running in the check phase, after the turn's reads and before the next poll
// (Node's event loop order); used by pipeline.ts for calls without credentials. Guarded by:
// test/unit/http/turn-batch.test.ts. Figures: docs/operations.md#batching-per-turn
//
// Why: under load a turn reads many requests; their answers leaving together after the reads cost less per answer.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface TurnBatchOptions {
  /** Each task in its own async context (a traced request's span); off without tracing, saving a closure per task. */
  readonly keepAsyncContext: boolean;
}

export class TurnBatch {
  readonly #keepAsyncContext: boolean;
  #tasks: Array<() => void> = [];

  constructor(options: TurnBatchOptions) {
    this.#keepAsyncContext = options.keepAsyncContext;
  }

  readonly #runAll = (): void => {
    const tasks = this.#tasks;
    this.#tasks = [];
    let failure: { readonly error: unknown } | null = null;
    for (const task of tasks) {
      // A throwing task must not strand the others; the first error is rethrown after all ran (uncaught: serve.ts exits).
      try {
        task();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== null) throw failure.error;
  };

  /** After the tasks put off before it. */
  later(task: () => void): void {
    if (this.#tasks.length === 0) setImmediate(this.#runAll);
    if (!this.#keepAsyncContext) {
      this.#tasks.push(task);
      return;
    }
    const inContext = AsyncLocalStorage.snapshot();
    this.#tasks.push(() => inContext(task));
  }
}
