/**
 * What the counters table says about keys: the requests counted this minute and month, per day of this and
 * last month, and when a key was last used. Read-only; it costs the request path nothing: the meter's one
 * conditional write per admitted request (proxy/quota/dynamo.ts) already keeps, in the item
 * `<key id>#<YYYY-MM>` (tables/counters.ts), the month's count, the day's count (`d01`…`d31`) and the start of
 * the minute window it counted in (`minute`). Items live until 35 days after their month (TTL), so this
 * month's and last month's are always there to read.
 */
import {
  COUNTER_ATTRIBUTES,
  counterKey,
  countersOf,
  minuteWindowStart,
  monthWindowId,
} from '../tables/counters.js';
import type { Item, KeyRecord } from '../tables/keys.js';
import { COUNTERS_SCHEMA } from '../tables/schema.js';
import type { AdminTables } from './dynamo.js';
import { isoSeconds } from './output.js';

export interface MonthUsage {
  /** Calendar month (UTC), e.g. `2026-11`. */
  month: string;
  count: number;
  /** One entry per day of the month up to today (this month) or to its end (last month). */
  days: { date: string; count: number }[];
  /**
   * Requests of the month counted before per-day counts were kept (a counter item written by an older proxy):
   * `count` minus the sum of `days`.
   */
  unattributed: number;
}

export interface KeyUsage {
  record: KeyRecord;
  /** Unix seconds of the current minute window, and its count. */
  minute: number;
  minuteCount: number;
  /** ISO 8601 start of the minute of the last counted request; null: none since the first of last month. */
  lastUsed: string | null;
  current: MonthUsage;
  previous: MonthUsage;
}

/** The first day of last month (UTC). */
const previousMonth = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));

/** A stored count as usage shows it: nothing (absent, or not a count) is 0. */
const count = (value: number | undefined) =>
  value !== undefined && Number.isSafeInteger(value) && value > 0 ? value : 0;

/** The ISO minute an item's minute window names, or undefined when it has none. */
function minuteOf(item: Item | undefined): string | undefined {
  const seconds = count(item && countersOf(item).minute);
  return seconds > 0 ? isoSeconds(seconds * 1000) : undefined;
}

/** A month's usage from its counter item, with days 1 … `lastDay`. */
function monthUsage(month: Date, item: Item | undefined, lastDay: number): MonthUsage {
  const id = monthWindowId(month);
  const stored = item && countersOf(item);
  const days = Array.from({ length: lastDay }, (_, i) => ({
    date: `${id}-${String(i + 1).padStart(2, '0')}`,
    count: count(stored?.days[i + 1]),
  }));
  const total = count(stored?.monthCount);
  const attributed = days.reduce((sum, day) => sum + day.count, 0);
  return { month: id, count: total, days, unattributed: Math.max(0, total - attributed) };
}

const daysIn = (month: Date) =>
  new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 0)).getUTCDate();

/**
 * A key's usage at `now`: one BatchGetItem of this month's and last month's counter items (consistent reads).
 * @example const usage = await readUsage(tables, record, new Date()); usage.current.days.at(-1)?.count
 */
export async function readUsage(tables: AdminTables, record: KeyRecord, now: Date): Promise<KeyUsage> {
  const last = previousMonth(now);
  const [currentKey, previousKey] = [counterKey(record.keyId, now), counterKey(record.keyId, last)];
  const items = await tables.counterItems([currentKey, previousKey]);
  const current = items.get(currentKey);
  const previous = items.get(previousKey);
  const minute = minuteWindowStart(now);
  return {
    record,
    minute,
    minuteCount:
      current && countersOf(current).minute === minute ? count(countersOf(current).minuteCount) : 0,
    lastUsed: minuteOf(current) ?? minuteOf(previous) ?? null,
    current: monthUsage(now, current, now.getUTCDate()),
    previous: monthUsage(last, previous, daysIn(last)),
  };
}

/**
 * When each key in `keyIds` was last used (a BatchGetItem of two counter items per key, 100 items a call).
 * Keys absent from the answer have no counted request since `since`.
 * @example const used = await lastUsed(tables, ['key_3fG7xQ2mPa'], now); used.lastUsed.get('key_3fG7xQ2mPa') // '2026-11-24T15:10Z'
 */
export async function lastUsed(
  tables: AdminTables,
  keyIds: readonly string[],
  now: Date,
): Promise<{ lastUsed: Map<string, string>; since: string }> {
  const last = previousMonth(now);
  const items = await tables.counterItems(
    keyIds.flatMap((keyId) => [counterKey(keyId, now), counterKey(keyId, last)]),
    [COUNTERS_SCHEMA.partitionKey, COUNTER_ATTRIBUTES.minute],
  );
  const found = new Map<string, string>();
  for (const keyId of keyIds) {
    const minute =
      minuteOf(items.get(counterKey(keyId, now))) ?? minuteOf(items.get(counterKey(keyId, last)));
    if (minute) found.set(keyId, minute);
  }
  return { lastUsed: found, since: lastUseSince(now) };
}

/**
 * Since when the counters tell a key's last use at `now`: the first of last month (UTC; items of older months
 * have expired).
 * @example lastUseSince(new Date('2026-11-24T10:00:00Z')) === '2026-10-01T00:00:00Z'
 */
export function lastUseSince(now: Date): string {
  return `${monthWindowId(previousMonth(now))}-01T00:00:00Z`;
}
