// Work put off to the end of the current turn of the event loop (its check phase), to run there together, in order.
//
// Under load one turn of the event loop reads many requests. Answering each as it is read interleaves reads and writes;
// letting the turn's answers leave together, after its reads, costs less per answer (fewer, fuller turns) and changes no
// byte of any answer. One setImmediate per turn, however many tasks wait for it.

export class TurnBatch {
  #tasks: Array<() => void> = [];

  readonly #runAll = (): void => {
    const tasks = this.#tasks;
    this.#tasks = [];
    let failure: { readonly error: unknown } | null = null;
    for (const task of tasks) {
      // One task that throws must not strand the others (each is a request waiting to go on); the first error is
      // thrown again once every task has run, as it would have been without the batch.
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
    this.#tasks.push(task);
  }
}
