/**
 * The two DynamoDB tables behind keys and quotas, their attribute names, and an idempotent `createTables`
 * for local servers and tests. The CDK app declares the same schema: change both together.
 */
import {
  type AttributeValue,
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
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
  };
}

async function createTable(
  client: DynamoDBClient,
  input: ConstructorParameters<typeof CreateTableCommand>[0],
) {
  try {
    await client.send(new CreateTableCommand(input));
    return true;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
    return false;
  }
}

/** Enable TTL on the counters table; servers without the TTL API (dynalite) keep old items instead. */
async function enableCounterTtl(client: DynamoDBClient, table: string): Promise<'enabled' | 'unsupported'> {
  try {
    const described = await client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    const ttl = described.TimeToLiveDescription;
    const on = ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING';
    if (on && ttl?.AttributeName === COUNTERS_SCHEMA.ttlAttribute) return 'enabled';
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { AttributeName: COUNTERS_SCHEMA.ttlAttribute, Enabled: true },
      }),
    );
    return 'enabled';
  } catch (error) {
    if ((error as { name?: string }).name === 'UnknownOperationException') return 'unsupported';
    throw error;
  }
}

/**
 * Create the keys and counters tables if they do not exist (on-demand billing), wait until both are
 * active, and enable TTL on the counters where the server supports it. Safe to run again and again.
 * @example
 * await createTables(dynamoClient({ endpoint }), { keysTable: 'keys', countersTable: 'counters' });
 */
export async function createTables(
  client: DynamoDBClient,
  names: TableNames,
): Promise<{ created: string[]; ttl: 'enabled' | 'unsupported' }> {
  const created: string[] = [];
  const keys = await createTable(client, {
    TableName: names.keysTable,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: KEYS_SCHEMA.partitionKey, AttributeType: 'S' },
      { AttributeName: KEYS_SCHEMA.keyIdAttribute, AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: KEYS_SCHEMA.partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [
      {
        IndexName: KEYS_SCHEMA.keyIdIndex,
        KeySchema: [{ AttributeName: KEYS_SCHEMA.keyIdAttribute, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  });
  if (keys) created.push(names.keysTable);
  const counters = await createTable(client, {
    TableName: names.countersTable,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: COUNTERS_SCHEMA.partitionKey, AttributeType: 'S' }],
    KeySchema: [{ AttributeName: COUNTERS_SCHEMA.partitionKey, KeyType: 'HASH' }],
  });
  if (counters) created.push(names.countersTable);
  for (const table of [names.keysTable, names.countersTable]) {
    await waitUntilTableExists({ client, maxWaitTime: 120, minDelay: 1 }, { TableName: table });
  }
  return { created, ttl: await enableCounterTtl(client, names.countersTable) };
}
