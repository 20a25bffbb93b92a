/**
 * An idempotent `createTables` for local servers and tests: the schema of proxy/tables.ts, on demand. The
 * CDK app creates the deployed tables.
 */
import {
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { COUNTERS_SCHEMA, KEYS_SCHEMA, type TableNames } from '../tables.js';

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
