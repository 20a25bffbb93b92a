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
 * | `stopped_until` | a revoked key's stop: Unix milliseconds until which the meter admits none of its requests |
 * | `expires_at` | TTL: the start of the next month + 35 days |
 *
 * Every admitted request increments `month_count` and exactly one day attribute in the same UpdateItem, so the
 * day counts of a month add up to its `month_count` (apart from requests counted before per-day counts existed).
 * The attributes are named once ({@link COUNTER_ATTRIBUTES}) and read by one decoder ({@link countersOf}).
 */
import type { Item } from './keys.js';
import { COUNTER_RETENTION_SECONDS, KEY_CACHE_MAX_MS } from './schema.js';

/** The counter item's attributes by meaning (the day counts: {@link dayAttribute}). */
export const COUNTER_ATTRIBUTES = {
  monthCount: 'month_count',
  minute: 'minute',
  minuteCount: 'minute_count',
  /**
   * A revoked key's stop (key administration writes it when it revokes, removes it when it enables): Unix
   * milliseconds until which the meter's conditional write admits no request of the key, so every proxy
   * container refuses it at once, whatever its key cache still holds. Absent, or passed: no stop.
   */
  stoppedUntil: 'stopped_until',
} as const;

/**
 * How long a revoke's stop lasts: the longest a proxy container may go on with a key it read before the revoke
 * (the key cache's longest setting, KEY_CACHE_MAX_MS), and a minute more for DynamoDB's replication and the
 * revoking call itself. After it every container has read the key again and refuses it from its cache.
 */
export const STOP_MS = KEY_CACHE_MAX_MS + 60_000;

/**
 * What a counter item holds, each value as the number stored: undefined where the item (or the part of it a
 * write answered with) does not carry the attribute, NaN where it holds something that is not a number. Who
 * reads decides what that means: the meter fails closed, the usage reader counts nothing.
 */
export interface StoredCounters {
  /** Unix seconds of the start of the minute window counted. */
  minute: number | undefined;
  minuteCount: number | undefined;
  monthCount: number | undefined;
  /** A revoked key's stop: Unix milliseconds until which no request is admitted. */
  stoppedUntil: number | undefined;
  /** `days[d]`: the count of day `d` of the month (1–31); `days[0]` is unused. */
  days: (number | undefined)[];
}

/**
 * The counters in `item` (see {@link StoredCounters}).
 * @example countersOf({ month_count: { N: '12' }, d03: { N: '5' } }).days[3] === 5
 */
export function countersOf(item: Item): StoredCounters {
  const number = (name: string) => {
    const value = item[name];
    return value === undefined ? undefined : Number(value.N ?? Number.NaN);
  };
  return {
    minute: number(COUNTER_ATTRIBUTES.minute),
    minuteCount: number(COUNTER_ATTRIBUTES.minuteCount),
    monthCount: number(COUNTER_ATTRIBUTES.monthCount),
    stoppedUntil: number(COUNTER_ATTRIBUTES.stoppedUntil),
    days: Array.from({ length: 32 }, (_, day) => (day === 0 ? undefined : number(dayName(day)))),
  };
}

const dayName = (day: number) => `d${String(day).padStart(2, '0')}`;

/** Unix seconds of the start of the minute containing `now` (the `X-RateLimit-Reset` value). */
export function minuteWindowStart(now: Date): number {
  return Math.floor(now.getTime() / 60_000) * 60;
}

/** Window id of the calendar month, e.g. `2026-11`. */
export function monthWindowId(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Unix seconds of the start of the calendar month (UTC) after the one of `now`. */
export function nextMonthStart(now: Date): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
}

/** The TTL (`expires_at`, Unix seconds) of the counter item of the month of `now`: 35 days after the month. */
export function counterExpiresAt(now: Date): number {
  return nextMonthStart(now) + COUNTER_RETENTION_SECONDS;
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
  return dayName(now.getUTCDate());
}
