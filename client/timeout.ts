/**
 * The `timeout` of each request: a signal that aborts when the caller's signal does or when the time is up,
 * whichever comes first, and that tells the two apart (a caller's abort rejects the call with its reason; a
 * timeout is a failure the client retries, then reports as `timeout`). Built on AbortController and setTimeout
 * alone, so it runs wherever the client does (`AbortSignal.any` is newer than Node.js 20.0).
 */

/** The client's `timeout` unless told otherwise: the API's function gives up after 10 s, so 30 s is generous. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** setTimeout's longest delay; a longer timeout is no timeout. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * A `timeout` option checked: milliseconds, positive; `Infinity` (or anything past setTimeout's range) for none.
 * @example timeoutOf(5000, 'timeout') // → 5000
 * @example timeoutOf(0, 'timeout') // throws RangeError: timeout must be a positive number of milliseconds (Infinity for none)
 */
export function timeoutOf(value: number, name: string): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive number of milliseconds (Infinity for none)`);
  }
  return value;
}

/** The signal of one request, and how it ended. */
export interface RequestSignal {
  signal: AbortSignal;
  /** Whether the time ran out (the caller's signal may have aborted as well: the caller's reason comes first). */
  timedOut(): boolean;
  /** Stop the timer and stop listening to the caller's signal: the request is over. */
  done(): void;
}

/**
 * A signal for one request that aborts with the caller's reason when `caller` aborts, or after `timeoutMs`.
 * @example const request = requestSignal(options.signal, 5000);
 * try { await fetch(url, { signal: request.signal }); } finally { request.done(); }
 */
export function requestSignal(caller: AbortSignal | undefined, timeoutMs: number): RequestSignal {
  const controller = new AbortController();
  let timedOut = false;
  const follow = () => controller.abort(caller?.reason);
  if (caller?.aborted) follow();
  else caller?.addEventListener('abort', follow, { once: true });
  const timer =
    timeoutMs <= LONGEST_TIMER_MS
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', follow);
    },
  };
}
