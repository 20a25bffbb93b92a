/**
 * What the counters table says about keys: the requests counted this month and minute, and when a key was
 * last used. Read-only; never on the request path.
 *
 * Last use costs the request path nothing: the meter's one write per admitted request (proxy/quota/dynamo.ts)
 * already stores, in the item `<key id>#<YYYY-MM>`, the start of the minute window it counted in (`minute`).
 * The newest month's item therefore holds the minute of the key's last counted request. Items live until 35
 * days after their month (TTL), so this month's and last month's items are read: a key with neither was not
 * used since the first of last month (or only refused: 401, 429 and 503 are not counted).
 */
import {
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { KeyRecord } from '../keys/interface.js';
import { minuteWindowStart, monthWindowId } from '../quota/windows.js';
import { COUNTERS_SCHEMA, type Item } from '../tables.js';
import { type AdminOptions, fault, findKey } from './keys.js';

export interface Usage {
  record: KeyRecord;
  /** Calendar month (UTC), e.g. `2026-11`. */
  month: string;
  monthCount: number;
  /** Unix seconds of the current minute window. */
  minute: number;
  minuteCount: number;
  /** ISO 8601 start of the minute of the last counted request; null: none since the first of last month. */
  lastUsed: string | null;
}

export type UsageOutcome = { ok: true; usage: Usage } | { ok: false; reason: 'not-found' };

/** The month ids read for last use: this month and the one before. */
function monthsOf(now: Date): [current: string, previous: string] {
  const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return [monthWindowId(now), monthWindowId(previous)];
}

const counterKey = (keyId: string, month: string) => ({
  [COUNTERS_SCHEMA.partitionKey]: { S: `${keyId}#${month}` },
});

/** The ISO minute an item's `minute` attribute names, or undefined when it has none. */
function minuteOf(item: Item | undefined): string | undefined {
  const seconds = Number(item?.minute?.N);
  return Number.isSafeInteger(seconds) && seconds > 0
    ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')
    : undefined;
}

/** BatchGetItem reads at most 100 items per call. */
const BATCH_ITEMS = 100;
/** Rounds of unprocessed items (throttling) before giving up. */
const BATCH_ROUNDS = 5;

/**
 * When each key in `keyIds` was last used (a BatchGetItem of two counter items per key, at most 100 items a
 * call). Keys absent from the answer have no counted request since `since`.
 * @example const used = await lastUsed(admin, ['key_3fG7xQ2mPa']); used.get('key_3fG7xQ2mPa') // '2026-11-24T15:10Z'
 */
export async function lastUsed(
  admin: AdminOptions,
  keyIds: readonly string[],
  now: Date = new Date(),
): Promise<{ lastUsed: Map<string, string>; since: string }> {
  const [current, previous] = monthsOf(now);
  const found = new Map<string, { month: string; minute: string }>();
  const wanted = keyIds.flatMap((keyId) => [counterKey(keyId, current), counterKey(keyId, previous)]);
  try {
    for (let offset = 0; offset < wanted.length; offset += BATCH_ITEMS) {
      let keys: Item[] | undefined = wanted.slice(offset, offset + BATCH_ITEMS);
      for (let round = 0; keys?.length; round++) {
        if (round === BATCH_ROUNDS) throw new Error('counters stayed throttled');
        const response: BatchGetItemCommandOutput = await admin.client.send(
          new BatchGetItemCommand({
            RequestItems: {
              [admin.countersTable]: {
                Keys: keys,
                ProjectionExpression: 'pk, #minute',
                ExpressionAttributeNames: { '#minute': 'minute' },
              },
            },
          }),
        );
        for (const item of response.Responses?.[admin.countersTable] ?? []) {
          const [keyId, month] = (item.pk?.S ?? '').split('#') as [string, string];
          const minute = minuteOf(item);
          const known = found.get(keyId);
          // This month's item wins over last month's.
          if (minute && (!known || known.month < month)) found.set(keyId, { month, minute });
        }
        keys = response.UnprocessedKeys?.[admin.countersTable]?.Keys;
        if (keys?.length) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));
      }
    }
  } catch (error) {
    throw fault('quota', admin.countersTable, 'reading when keys were last used', error);
  }
  const since = `${previous}-01T00:00:00Z`;
  return { lastUsed: new Map([...found].map(([keyId, { minute }]) => [keyId, minute])), since };
}

/**
 * Requests counted for a key in the calendar month and minute of `now`, and when it was last used.
 * @example const outcome = await usage(admin, 'key_3fG7xQ2mPa'); // { ok: true, usage: { monthCount: 120, … } }
 */
export async function usage(
  admin: AdminOptions,
  keyId: string,
  now: Date = new Date(),
): Promise<UsageOutcome> {
  const record = await findKey(admin, keyId);
  if (!record) return { ok: false, reason: 'not-found' };
  const month = monthWindowId(now);
  const minute = minuteWindowStart(now);
  let item: Item | undefined;
  try {
    const response = await admin.client.send(
      new GetItemCommand({
        TableName: admin.countersTable,
        Key: counterKey(keyId, month),
        ConsistentRead: true,
      }),
    );
    item = response.Item;
  } catch (error) {
    throw fault('quota', admin.countersTable, 'reading usage', error);
  }
  const monthCount = Number(item?.month_count?.N ?? 0);
  const minuteCount = Number(item?.minute?.N) === minute ? Number(item?.minute_count?.N ?? 0) : 0;
  const used = minuteOf(item) ?? (await lastUsed(admin, [keyId], now)).lastUsed.get(keyId) ?? null;
  return { ok: true, usage: { record, month, monthCount, minute, minuteCount, lastUsed: used } };
}
