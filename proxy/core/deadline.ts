/** Every dependency call is bounded in time and its faults are named after the dependency. */
import { type Dependency, DependencyError } from '../errors.js';

/**
 * Run `call` with an abort signal that fires after `timeoutMs`, and stop waiting at that moment even if
 * the implementation ignores the signal. Any failure becomes a {@link DependencyError} of `dependency`,
 * so the caller can answer with that dependency's 503. A call that settles after the deadline is caught
 * and dropped: it can never become an unhandled rejection.
 * @example await callWithDeadline('objects', 2000, (signal) => store.get(key, { signal }))
 */
export function callWithDeadline<T>(
  dependency: Dependency,
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const fail = (error: unknown) =>
      reject(
        error instanceof DependencyError && error.dependency === dependency
          ? error
          : new DependencyError(
              dependency,
              `${dependency} call failed: ${(error as Error)?.message ?? error}`,
              {
                cause: error,
              },
            ),
      );
    const timer = setTimeout(() => {
      const error = new DependencyError(dependency, `${dependency} call timed out after ${timeoutMs} ms`);
      controller.abort(error);
      fail(error);
    }, timeoutMs);
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call(controller.signal));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        fail(error);
      },
    );
  });
}
