/**
 * An idempotent `createTables` for local servers and tests: the schema of tables/schema.ts, on demand. The
 * CDK app (infra/storage.ts) creates the deployed tables from the same names.
 */
import {
  type AttributeDefinition,
  type AttributeValue,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  PutItemCommand,
  ScanCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
import { COUNTERS_SCHEMA, KEYS_SCHEMA, type TableNames } from '../tables/schema.js';

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

const OWNER_INDEX: GlobalSecondaryIndex = {
  IndexName: KEYS_SCHEMA.ownerIndex,
  KeySchema: [
    { AttributeName: KEYS_SCHEMA.ownerAttribute, KeyType: 'HASH' },
    { AttributeName: KEYS_SCHEMA.ownerSortAttribute, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'ALL' },
};

const KEYS_TABLE_ATTRIBUTES: AttributeDefinition[] = [
  { AttributeName: KEYS_SCHEMA.partitionKey, AttributeType: 'S' },
  { AttributeName: KEYS_SCHEMA.keyIdAttribute, AttributeType: 'S' },
  { AttributeName: KEYS_SCHEMA.ownerAttribute, AttributeType: 'S' },
  { AttributeName: KEYS_SCHEMA.ownerSortAttribute, AttributeType: 'S' },
];

const keysTableInput = (table: string): CreateTableCommandInput => ({
  TableName: table,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: KEYS_TABLE_ATTRIBUTES,
  KeySchema: [{ AttributeName: KEYS_SCHEMA.partitionKey, KeyType: 'HASH' }],
  GlobalSecondaryIndexes: [
    {
      IndexName: KEYS_SCHEMA.keyIdIndex,
      KeySchema: [{ AttributeName: KEYS_SCHEMA.keyIdAttribute, KeyType: 'HASH' }],
      Projection: { ProjectionType: 'ALL' },
    },
    OWNER_INDEX,
  ],
});

async function hasOwnerIndex(client: DynamoDBClient, table: string): Promise<boolean> {
  const described = await client.send(new DescribeTableCommand({ TableName: table }));
  return (described.Table?.GlobalSecondaryIndexes ?? []).some(
    (index) => index.IndexName === KEYS_SCHEMA.ownerIndex,
  );
}

/**
 * A keys table created before owners existed gains the owner index (its keys keep working without an owner).
 * DynamoDB builds the index in the background. dynalite answers UpdateTable without building it, so a local
 * table is copied instead: every item read, the table created again with both indexes, the items written
 * back (a local server's few keys; nothing else writes while `npm start` holds its data directory).
 */
async function addOwnerIndex(client: DynamoDBClient, table: string): Promise<'added' | 'present'> {
  if (await hasOwnerIndex(client, table)) return 'present';
  await client.send(
    new UpdateTableCommand({
      TableName: table,
      AttributeDefinitions: KEYS_TABLE_ATTRIBUTES.slice(2),
      GlobalSecondaryIndexUpdates: [{ Create: OWNER_INDEX }],
    }),
  );
  if (await hasOwnerIndex(client, table)) return 'added';
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  await client.send(new DeleteTableCommand({ TableName: table }));
  await waitUntilTableNotExists({ client, maxWaitTime: 120, minDelay: 1 }, { TableName: table });
  await client.send(new CreateTableCommand(keysTableInput(table)));
  await waitUntilTableExists({ client, maxWaitTime: 120, minDelay: 1 }, { TableName: table });
  for (const item of items) await client.send(new PutItemCommand({ TableName: table, Item: item }));
  return 'added';
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
): Promise<{
  created: string[];
  ownerIndex: 'created' | 'added' | 'present';
  ttl: 'enabled' | 'unsupported';
}> {
  const created: string[] = [];
  const keys = await createTable(client, keysTableInput(names.keysTable));
  if (keys) created.push(names.keysTable);
  const ownerIndex = keys ? 'created' : await addOwnerIndex(client, names.keysTable);
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
  return { created, ownerIndex, ttl: await enableCounterTtl(client, names.countersTable) };
}
