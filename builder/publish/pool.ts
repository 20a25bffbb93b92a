/** Bounded concurrency for uploads: at most `limit` tasks in flight, the first failure stops new ones. */
export class TaskPool {
  readonly #inFlight = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`concurrency must be ≥ 1 (got ${limit})`);
  }

  /**
   * Start `task`, first waiting for a free slot. Rethrows the first failure of any earlier task, so a
   * caller looping over work stops at the first fault.
   * @example
   * const pool = new TaskPool(8);
   * for (const item of items) await pool.run(() => upload(item));
   * await pool.drain();
   */
  async run(task: () => Promise<void>): Promise<void> {
    while (this.#inFlight.size >= this.limit) await Promise.race(this.#inFlight);
    if (this.#failure) throw this.#failure.error;
    const running: Promise<void> = task().then(
      () => {
        this.#inFlight.delete(running);
      },
      (error: unknown) => {
        this.#inFlight.delete(running);
        this.#failure ??= { error };
      },
    );
    this.#inFlight.add(running);
  }

  /**
   * Wait for every task in flight; rethrow the first failure.
   * @example await pool.drain();
   */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
    if (this.#failure) throw this.#failure.error;
  }
}
