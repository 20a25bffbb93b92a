/**
 * The admin side's text helpers: the one time formatter (to the second, UTC) and limits for humans, which
 * also word the free tier's fixed limits from FREE_TIER_LIMITS instead of retyping them.
 */
import { describe, expect, it } from 'vitest';
import { isoSeconds, limitsText } from '../../admin/output.js';
import { FREE_TIER_LIMITS } from '../../tables/keys.js';

describe('isoSeconds', () => {
  it.each([
    [new Date('2026-11-24T15:32:10.123Z'), '2026-11-24T15:32:10Z'],
    [Date.UTC(2026, 0, 1, 0, 0, 0), '2026-01-01T00:00:00Z'],
    [1_764_000_000 * 1000, '2025-11-24T16:00:00Z'],
    ['2026-02-28T23:59:59.999Z', '2026-02-28T23:59:59Z'],
  ])('%o → %s', (time, text) => {
    expect(isoSeconds(time)).toBe(text);
  });
});

describe('limitsText', () => {
  it('words the free tier as the manual does', () => {
    expect(limitsText(FREE_TIER_LIMITS)).toBe('60/minute, 5000/month');
  });

  it('words any limits', () => {
    expect(limitsText({ minute: 600, month: 1_000_000 })).toBe('600/minute, 1000000/month');
  });
});
