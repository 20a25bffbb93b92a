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

/** Admitted (`ok`), or refused because the quota of the window named by `reason` is used up. */
export type MeterOutcome =
  | ({ ok: true } & RateLimitState)
  | ({ ok: false; reason: 'minute' | 'month'; retryAfterSeconds: number } & RateLimitState);

export interface QuotaMeter {
  /** Count one request for `key` at `now` if both windows have room. Throws DependencyError on faults. */
  meter(key: KeyRecord, now: Date, options?: { signal?: AbortSignal }): Promise<MeterOutcome>;
}
