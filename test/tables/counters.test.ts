/**
 * The counter item (tables/counters.ts): windows, the item's key, the day's attribute, all UTC; the one decoder
 * the meter and the usage reader share.
 */
import { describe, expect, it } from 'vitest';
import {
  COUNTER_ATTRIBUTES,
  counterKey,
  countersOf,
  dayAttribute,
  minuteWindowStart,
  monthWindowId,
} from '../../tables/counters.js';

describe('the counter item', () => {
  it('names the month, the minute, the item and the day of a time, in UTC', () => {
    const late = new Date('2026-11-30T23:59:59.999Z');
    expect(monthWindowId(late)).toBe('2026-11');
    expect(minuteWindowStart(late)).toBe(Date.parse('2026-11-30T23:59:00Z') / 1000);
    expect(counterKey('key_3fG7xQ2mPa', late)).toBe('key_3fG7xQ2mPa#2026-11');
    expect(dayAttribute(late)).toBe('d30');
    expect(dayAttribute(new Date('2026-12-01T00:00:00.000Z'))).toBe('d01');
    // 23:30 in UTC-01:00 is already the next day in UTC.
    expect(dayAttribute(new Date('2026-11-04T23:30:00-01:00'))).toBe('d05');
  });
});

describe('countersOf', () => {
  it('reads what an item holds: numbers, undefined where absent, NaN where not a number', () => {
    const stored = countersOf({
      pk: { S: 'key_3fG7xQ2mPa#2026-11' },
      [COUNTER_ATTRIBUTES.monthCount]: { N: '12' },
      [COUNTER_ATTRIBUTES.minute]: { N: String(Date.parse('2026-11-24T15:32:00Z') / 1000) },
      [COUNTER_ATTRIBUTES.minuteCount]: { S: 'three' },
      [dayAttribute(new Date('2026-11-03T00:00:00Z'))]: { N: '5' },
      d31: { N: '7' },
    });
    expect(stored).toMatchObject({ monthCount: 12, minute: Date.parse('2026-11-24T15:32:00Z') / 1000 });
    expect(stored.minuteCount).toBeNaN();
    expect(stored.days).toHaveLength(32);
    expect([stored.days[3], stored.days[31], stored.days[4]]).toEqual([5, 7, undefined]);
    expect(countersOf({})).toEqual({
      minute: undefined,
      minuteCount: undefined,
      monthCount: undefined,
      days: Array(32).fill(undefined),
    });
  });
});
