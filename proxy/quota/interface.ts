import type { KeyRecord } from '../../tables/keys.js';

/**
 * Quota metering: one exact admission decision per request, against the calendar minute and calendar
 * month (UTC) windows of the key.
 */
export interface RateLimitState {
  limitMonth: number;
  remainingMonth: number;
  limitMinute: number;
  remainingMinute: number;
  /** Unix seconds of the start of the current minute window (`X-RateLimit-Reset`). */
  reset: number;
}

/** What an admitted request's count was written as: enough to take it back ({@link QuotaMeter.refund}). */
export interface Admission {
  /** Unix seconds of the start of the minute window the request was counted in. */
  countedIn: number;
}

/**
 * Admitted (`ok`), or refused because the quota of the window named by `reason` is used up, or because the key
 * was revoked and its counters stopped (`stopped`: tables/counters.ts; answered `401 invalid_key`, as the key
 * cache would answer once it reads the key again).
 */
export type MeterOutcome = QuotaOutcome | { ok: false; reason: 'stopped' };

/** Admitted, or refused for a window used up: what a meter without stops (memory.ts) answers. */
export type QuotaOutcome =
  | ({ ok: true } & Admission & RateLimitState)
  | ({ ok: false; reason: 'minute' | 'month'; retryAfterSeconds: number } & RateLimitState);

export interface QuotaMeter {
  /** Count one request for `key` at `now` if both windows have room. Throws DependencyError on faults. */
  meter(key: KeyRecord, now: Date, options?: { signal?: AbortSignal }): Promise<MeterOutcome>;
  /**
   * Take back the count of a request `meter` admitted at `now` whose answer is not sent after all (its object
   * read failed while it was metered: a 503 is not counted, docs/api.md#rate-limits). Sent once, never again:
   * throws DependencyError when the count could not be taken back (or may not have been), and the request
   * then stays counted, once.
   */
  refund(key: KeyRecord, now: Date, admission: Admission, options?: { signal?: AbortSignal }): Promise<void>;
}
