/**
 * When to try again and how long to wait. 429: exactly what `Retry-After` says, never less. 502/503/504 and
 * network failures: exponential backoff with full jitter (a random wait in [0, min(cap, base·2^attempt)]),
 * so many clients that failed together do not come back together.
 */

/** Backoff of 503s and network failures: 500 ms doubling per retry, each wait at most 8 s. */
export const BACKOFF = { baseMs: 500, capMs: 8_000 } as const;

/** Longest `Retry-After` the client waits out by default (the minute window); longer ones are thrown at once. */
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;

/** Statuses worth retrying after a backoff: the service or a proxy in front of it is briefly unavailable. */
export const BACKOFF_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

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
