/** The counter item's names (tables/counters.ts): windows, the item's key, the day's attribute, all UTC. */
import { describe, expect, it } from 'vitest';
import { counterKey, dayAttribute, minuteWindowStart, monthWindowId } from '../../tables/counters.js';

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
