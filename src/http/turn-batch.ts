// Work put off to the end of the current turn of the event loop (its check phase), to run there together, in order.
//
// Performance trick. Relies on: setImmediate running in the check phase, after the turn's reads and before the next poll
// (Node's event loop order); used by pipeline.ts for calls without credentials. Guarded by:
// test/unit/http/turn-batch.test.ts. Figures: docs/operations.md#batching-per-turn
//
// Why: under load one turn reads many requests; letting the turn's answers leave together, after its reads, costs less per
// answer than interleaving reads and writes, and changes no byte of any answer. One setImmediate per turn.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface TurnBatchOptions {
  /**
   * Runs each task in the async context it was put off in (AsyncLocalStorage: a traced request's span). Without it every
   * task of a turn runs in the context of the first, whose setImmediate runs them all. Off when nothing keeps such context
   * (tracing off): a closure per task saved.
   */
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
      // One task that throws must not strand the others (each is a request waiting to go on). The first error is thrown
      // again once every task has run: an uncaught exception (serve.ts logs it and exits), where Fastify's hook runner
      // would have answered the one request 500. Nothing on the path of the pipeline's done() is known to throw.
      try {
        task();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== null) throw failure.error;
  };

  /** Runs `task` in this turn's check phase, after the tasks put off before it. */
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
