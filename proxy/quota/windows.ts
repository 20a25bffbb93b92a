/**
 * Quota windows (docs/api.md#rate-limits): the calendar minute and the calendar month, both UTC.
 * Pure functions of the clock, shared by every QuotaMeter implementation.
 */

import { minuteWindowStart, nextMonthStart } from '../../tables/counters.js';

// The windows name the counter items, a contract with key administration: tables/counters.ts.
export { minuteWindowStart, monthWindowId } from '../../tables/counters.js';

/**
 * Whole seconds until the exhausted window resets, at least 1.
 * @example retryAfterSeconds('minute', new Date('2026-11-21T10:00:59.200Z')) === 1
 */
export function retryAfterSeconds(exhausted: 'minute' | 'month', now: Date): number {
  const resetAt = exhausted === 'minute' ? minuteWindowStart(now) + 60 : nextMonthStart(now);
  return Math.max(1, Math.ceil(resetAt - now.getTime() / 1000));
}
