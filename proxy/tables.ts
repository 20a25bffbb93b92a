/**
 * The two DynamoDB tables behind keys and quotas: their attribute names and how a key record is stored.
 * The CDK app (infra/storage.ts) and `createTables` (admin/tables.ts) declare the same schema: change
 * them together.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { KeyRecord, Tier } from './keys/interface.js';

/** Keys table: one item per key, addressed by `sha256(key)`; the key itself is never stored. */
export const KEYS_SCHEMA = {
  partitionKey: 'key_hash',
  keyIdIndex: 'key_id-index',
  keyIdAttribute: 'key_id',
} as const;

/** Counters table: one item per key per calendar month, `pk = <key id>#<YYYY-MM>`. */
export const COUNTERS_SCHEMA = {
  partitionKey: 'pk',
  ttlAttribute: 'expires_at',
} as const;

/** How long a month's counter item outlives the month (usage stays readable for the following month). */
export const COUNTER_RETENTION_SECONDS = 35 * 24 * 3600;

export interface TableNames {
  keysTable: string;
  countersTable: string;
}

export type Item = Record<string, AttributeValue>;

const TIERS: readonly Tier[] = ['free', 'partner'];

/**
 * The key record stored in `item`, or `undefined` when the item is not a well-formed key record.
 * @example keyRecordFromItem({ key_hash: { S: 'ab…' }, key_id: { S: 'key_x' }, … })?.tier === 'free'
 */
export function keyRecordFromItem(item: Item): KeyRecord | undefined {
  const keyHash = item.key_hash?.S;
  const keyId = item.key_id?.S;
  const tier = item.tier?.S as Tier | undefined;
  const status = item.status?.S;
  const minute = Number(item.limit_minute?.N);
  const month = Number(item.limit_month?.N);
  const created = item.created?.S;
  if (!keyHash || !keyId || !created || !tier || !TIERS.includes(tier)) return undefined;
  if (status !== 'active' && status !== 'revoked') return undefined;
  if (!Number.isSafeInteger(minute) || !Number.isSafeInteger(month)) return undefined;
  const record: KeyRecord = { keyHash, keyId, tier, status, limits: { minute, month }, created };
  if (item.label?.S !== undefined) record.label = item.label.S;
  const expires = item.expires?.S;
  if (expires !== undefined) {
    // An expiry that cannot be read must not turn into "never expires": the record is malformed.
    if (Number.isNaN(Date.parse(expires))) return undefined;
    record.expires = expires;
  }
  return record;
}

/**
 * The item that stores `record` (no plaintext key: the record holds only its hash).
 * @example keyItem(record).key_hash.S === record.keyHash
 */
export function keyItem(record: KeyRecord): Item {
  return {
    key_hash: { S: record.keyHash },
    key_id: { S: record.keyId },
    tier: { S: record.tier },
    status: { S: record.status },
    limit_minute: { N: String(record.limits.minute) },
    limit_month: { N: String(record.limits.month) },
    created: { S: record.created },
    ...(record.label !== undefined ? { label: { S: record.label } } : {}),
    ...(record.expires !== undefined ? { expires: { S: record.expires } } : {}),
  };
}
