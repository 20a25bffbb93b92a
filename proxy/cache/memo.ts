/**
 * A memo of values derived from strings (request lines, header values, keys), bounded by entries: emptied
 * when full, so a flood of distinct inputs costs an occasional refill, never unbounded memory, while the
 * few inputs of a hot working set are worked out once.
 */
export class BoundedMemo<T> {
  readonly #values = new Map<string, T>();

  constructor(readonly maxEntries: number) {}

  /**
   * The value for `key`: `compute(key)` the first time, the kept value after.
   * @example new BoundedMemo<string>(1_024).get(key, hashApiKey)
   */
  get(key: string, compute: (key: string) => T): T {
    let value = this.#values.get(key);
    if (value === undefined) {
      value = compute(key);
      this.set(key, value);
    }
    return value;
  }

  /** The value kept for `key`, if any: for callers that keep only some of the values they compute. */
  peek(key: string): T | undefined {
    return this.#values.get(key);
  }

  /** Keep `value` for `key`. */
  set(key: string, value: T): void {
    if (this.#values.size >= this.maxEntries) this.#values.clear();
    this.#values.set(key, value);
  }
}
