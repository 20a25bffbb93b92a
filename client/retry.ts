/**
 * When to try again and how long to wait: every retry waits an exponential backoff with full jitter (a random
 * wait in [0, min(cap, base·2^attempt))), added to what the server asked for — a 429's or 503's `Retry-After`,
 * never less — so that the clients of one key that were refused together do not all come back in the same
 * second. A wait longer than `maxRetryAfter` is not waited out.
 */

/** The jittered backoff: 500 ms doubling per retry, each at most 8 s (added to a `Retry-After`). */
export const BACKOFF = { baseMs: 500, capMs: 8_000 } as const;

/** Longest `Retry-After` the client waits out by default (the minute window); longer ones are thrown at once. */
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;

/** Statuses worth retrying after a backoff: the service or a proxy in front of it is briefly unavailable. */
const BACKOFF_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** A 429 without `Retry-After` (never sent by this API, maybe by something in front of it) waits at least 1 s. */
const FLOOR_OF_429_WITHOUT_RETRY_AFTER_MS = 1_000;

/** What failed, for {@link retryDelay}: the status (0 when no complete answer came) and its `Retry-After`. */
export interface Failure {
  status: number;
  /** Seconds, from `Retry-After`. */
  retryAfter: number | undefined;
}

/**
 * Milliseconds to wait before retry number `attempt + 1` of `failure`, or `undefined` when it is not retried
 * (a status that a retry cannot mend, or a `Retry-After` beyond `maxRetryAfterSeconds`, e.g. a spent monthly
 * quota: the caller's call). The number of retries is the caller's to bound.
 * @example retryDelay({ status: 429, retryAfter: 17 }, 0, () => 0.5, 60) // → 17250
 * @example retryDelay({ status: 503, retryAfter: undefined }, 2, () => 0.5, 60) // → 1000
 * @example retryDelay({ status: 404, retryAfter: undefined }, 0, () => 0.5, 60) // → undefined
 */
export function retryDelay(
  failure: Failure,
  attempt: number,
  random: () => number,
  maxRetryAfterSeconds: number,
): number | undefined {
  const { status, retryAfter } = failure;
  if (status !== 0 && status !== 429 && !BACKOFF_STATUSES.has(status)) return undefined;
  if (retryAfter !== undefined && retryAfter > maxRetryAfterSeconds) return undefined;
  const floor =
    retryAfter !== undefined ? retryAfter * 1000 : status === 429 ? FLOOR_OF_429_WITHOUT_RETRY_AFTER_MS : 0;
  return floor + backoffDelay(attempt, random);
}

/**
 * The full-jitter wait before retry number `attempt + 1`.
 * @example backoffDelay(0, () => 0.5) // → 250 (half of 500 ms)
 * @example backoffDelay(10, () => 1) // → 8000 (capped)
 */
export function backoffDelay(attempt: number, random: () => number): number {
  const ceiling = Math.min(BACKOFF.capMs, BACKOFF.baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in whole seconds: delta-seconds, or an HTTP date (rounded up); `undefined` when absent or
 * malformed.
 * @example parseRetryAfter('17', Date.now()) // → 17
 * @example parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('2026-10-21T07:27:58.5Z')) // → 2
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds : undefined;
  }
  // Only the IMF-fixdate of RFC 9110: Date.parse alone would take '-1' or '1.5' for dates.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

/** Waits; the client takes another (a fake clock) in tests. Must reject with `signal.reason` on abort. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Wait at least `ms` (timers may fire a little early, so the rest is waited out), rejecting at once with the
 * signal's reason when it aborts.
 * @example await sleep(1000, AbortSignal.timeout(5000));
 */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const until = performance.now() + ms;
    let timer: ReturnType<typeof setTimeout>;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const wait = (left: number) => {
      timer = setTimeout(() => {
        const rest = until - performance.now();
        if (rest > 0) return wait(rest);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.ceil(left));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    wait(ms);
  });
