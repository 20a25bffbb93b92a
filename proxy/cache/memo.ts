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
      if (this.#values.size >= this.maxEntries) this.#values.clear();
      this.#values.set(key, value);
    }
    return value;
  }
}
