/**
 * A key's counter item of one calendar month (UTC), as the request path's meter writes it (proxy/quota/dynamo.ts)
 * and key administration reads it (admin/usage.ts):
 *
 * | attribute | meaning |
 * |---|---|
 * | `pk` | `<key id>#<YYYY-MM>` |
 * | `month_count` | requests counted this month |
 * | `minute`, `minute_count` | Unix seconds of the start of the minute window being counted, and its count |
 * | `d01` … `d31` | requests counted on that day of the month (UTC), by the same write as `month_count` |
 * | `w0` … `w7` | the meter's ring of its last writes' tokens (a lost answer recognises its own write) |
 * | `expires_at` | TTL: the start of the next month + 35 days |
 *
 * Every admitted request increments `month_count` and exactly one day attribute in the same UpdateItem, so the
 * day counts of a month add up to its `month_count` (apart from requests counted before per-day counts existed).
 */

/** Unix seconds of the start of the minute containing `now` (the `X-RateLimit-Reset` value). */
export function minuteWindowStart(now: Date): number {
  return Math.floor(now.getTime() / 60_000) * 60;
}

/** Window id of the calendar month, e.g. `2026-11`. */
export function monthWindowId(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * The partition key of a key's counter item for the month of `now`.
 * @example counterKey('key_3fG7xQ2mPa', new Date('2026-11-24T10:00:00Z')) === 'key_3fG7xQ2mPa#2026-11'
 */
export function counterKey(keyId: string, now: Date): string {
  return `${keyId}#${monthWindowId(now)}`;
}

/**
 * The attribute counting the requests of the day of `now` (UTC): `d01` … `d31`.
 * @example dayAttribute(new Date('2026-11-05T23:59:59Z')) === 'd05'
 */
export function dayAttribute(now: Date): string {
  return `d${String(now.getUTCDate()).padStart(2, '0')}`;
}
