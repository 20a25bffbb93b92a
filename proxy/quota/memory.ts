/**
 * Exact quota metering in memory, with the window semantics of the DynamoDB meter (calendar minute and
 * calendar month, UTC; the month is checked first; nothing is counted for a refused request).
 * One process only: tests, benchmarks and local runs.
 */
import type { KeyRecord } from '../../tables/keys.js';
import type { MeterOutcome, QuotaMeter, RateLimitState } from './interface.js';
import { minuteWindowStart, monthWindowId, retryAfterSeconds } from './windows.js';

interface Counters {
  month: string;
  monthCount: number;
  minute: number;
  minuteCount: number;
}

/**
 * @example
 * const meter = new MemoryQuotaMeter();
 * await meter.meter(keyRecord, new Date()); // → { ok: true, remainingMinute: 59, … }
 */
export class MemoryQuotaMeter implements QuotaMeter {
  readonly #counters = new Map<string, Counters>();
  /** Meter calls made (tests count them). */
  calls = 0;

  async meter(key: KeyRecord, now: Date): Promise<MeterOutcome> {
    this.calls++;
    const month = monthWindowId(now);
    const minute = minuteWindowStart(now);
    let counters = this.#counters.get(key.keyId);
    if (!counters || counters.month !== month) counters = { month, monthCount: 0, minute, minuteCount: 0 };
    if (counters.minute !== minute) counters = { ...counters, minute, minuteCount: 0 };
    this.#counters.set(key.keyId, counters);

    const { limits } = key;
    const exhausted =
      counters.monthCount >= limits.month
        ? 'month'
        : counters.minuteCount >= limits.minute
          ? 'minute'
          : undefined;
    if (!exhausted) {
      counters.monthCount++;
      counters.minuteCount++;
    }
    const remainingMonth = Math.max(0, limits.month - counters.monthCount);
    const state: RateLimitState = {
      limitMonth: limits.month,
      remainingMonth,
      limitMinute: limits.minute,
      // Never promise more this minute than the month has left.
      remainingMinute: Math.min(Math.max(0, limits.minute - counters.minuteCount), remainingMonth),
      reset: minute,
    };
    if (exhausted)
      return { ok: false, reason: exhausted, retryAfterSeconds: retryAfterSeconds(exhausted, now), ...state };
    return { ok: true, ...state };
  }

  /** Forget every count (tests). */
  reset(): void {
    this.#counters.clear();
  }
}
