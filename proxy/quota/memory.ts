/**
 * Exact quota metering in memory, with the window semantics of the DynamoDB meter (calendar minute and
 * calendar month, UTC; the month is checked first; nothing is counted for a refused request; a refund takes an
 * admitted request's count back).
 * One process only: tests, benchmarks and local runs.
 */
import { DependencyError } from '../../store/errors.js';
import type { KeyRecord } from '../../tables/keys.js';
import type { Admission, QuotaMeter, QuotaOutcome, RateLimitState } from './interface.js';
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
  /** Refund calls made (tests count them). */
  refunds = 0;

  async meter(key: KeyRecord, now: Date): Promise<QuotaOutcome> {
    this.calls++;
    const minute = minuteWindowStart(now);
    let counters = this.#counters.get(key.keyId);
    // Within the minute of the last count the month is the same: no need to name it.
    if (!counters || counters.minute !== minute) {
      const month = monthWindowId(now);
      if (!counters || counters.month !== month) counters = { month, monthCount: 0, minute, minuteCount: 0 };
      else counters = { ...counters, minute, minuteCount: 0 };
      this.#counters.set(key.keyId, counters);
    }

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
    // Never promise more this minute than the month has left.
    const remainingMinute = Math.min(Math.max(0, limits.minute - counters.minuteCount), remainingMonth);
    if (exhausted) {
      const state: RateLimitState = {
        limitMonth: limits.month,
        remainingMonth,
        limitMinute: limits.minute,
        remainingMinute,
        reset: minute,
      };
      return { ok: false, reason: exhausted, retryAfterSeconds: retryAfterSeconds(exhausted, now), ...state };
    }
    return {
      ok: true,
      countedIn: minute,
      limitMonth: limits.month,
      remainingMonth,
      limitMinute: limits.minute,
      remainingMinute,
      reset: minute,
    };
  }

  /** Take back an admitted request's count: the month's, and the minute's while its window is still current. */
  async refund(key: KeyRecord, now: Date, admission: Admission): Promise<void> {
    this.refunds++;
    const counters = this.#counters.get(key.keyId);
    if (!counters || counters.month !== monthWindowId(now) || counters.monthCount < 1)
      throw new DependencyError('quota', 'quota refund found nothing to take back');
    counters.monthCount--;
    if (counters.minute === admission.countedIn && counters.minuteCount > 0) counters.minuteCount--;
  }

  /** Forget every count (tests). */
  reset(): void {
    this.#counters.clear();
  }
}
