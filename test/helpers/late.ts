/**
 * Settlements that come late on purpose (a dependency answering after the caller's deadline), and the wait for
 * them: instead of sleeping "long enough" before checking that nothing went unhandled, a test awaits `settled()`,
 * which resolves once every late settlement made so far has happened and Node has had its turn to report an
 * unhandled rejection; it answers the unhandled rejections seen meanwhile.
 */

export interface Late {
  /** A promise that rejects with `error` after `ms`. */
  reject<T = never>(ms: number, error?: Error): Promise<T>;
  /** A promise that resolves to `value` after `ms`. */
  resolve<T>(ms: number, value: T): Promise<T>;
  /** Once every late settlement made so far has happened: the unhandled rejections seen since `late()`. */
  settled(): Promise<unknown[]>;
}

/**
 * @example
 * const late = lateSettlements();
 * await expect(callWithDeadline('keys', 10, () => late.reject(60))).rejects.toThrow();
 * expect(await late.settled()).toEqual([]);
 */
export function lateSettlements(): Late {
  const fired: Promise<void>[] = [];
  const unhandled: unknown[] = [];
  const onRejection = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onRejection);
  const after = <T>(
    ms: number,
    settle: (resolve: (value: T) => void, reject: (error: Error) => void) => void,
  ) => {
    let done = () => {};
    fired.push(new Promise<void>((resolve) => (done = resolve)));
    return new Promise<T>((resolve, reject) =>
      setTimeout(() => {
        settle(resolve, reject);
        // Node reports an unhandled rejection once the microtasks after this callback have run: by then.
        setImmediate(done);
      }, ms),
    );
  };
  return {
    reject: (ms, error = new Error('late')) => after(ms, (_, reject) => reject(error)),
    resolve: (ms, value) => after(ms, (resolve) => resolve(value)),
    async settled() {
      await Promise.all(fired);
      process.off('unhandledRejection', onRejection);
      return unhandled;
    },
  };
}
