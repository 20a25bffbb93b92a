/**
 * Time to live in the local DynamoDB (src/dynamo-ttl.ts): a table's TTL is enabled and described as on AWS; a
 * sweep deletes what has expired and nothing else (before issue 40 every item stayed for ever: dynalite refused
 * UpdateTimeToLive). The product's counter items expiring with it: test/proxy/quota/dynamo.ttl.test.ts.
 */
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpired } from '../src/dynamo-ttl.js';
import { type LocalServer, startDynamo } from '../src/servers.js';
import { createTables, dynamoClient } from './helpers/aws.js';

const TABLES = { keysTable: 'ttl-keys', countersTable: 'ttl-counters' };
let server: LocalServer;
let client: DynamoDBClient;
const NOW = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  server = await startDynamo();
  client = dynamoClient({ endpoint: server.endpoint });
  expect((await createTables(client, TABLES)).ttl).toBe('enabled');
});
afterAll(async () => {
  client?.destroy();
  await server?.dispose();
});

/** A sweep as the server runs it, at `now`. */
const sweep = (now = NOW) => sweepExpired(server.endpoint, now);

async function countersNow(): Promise<string[]> {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: TABLES.countersTable }));
  return Items.map((item) => item.pk!.S!).sort();
}

describe('TTL, as DynamoDB has it', () => {
  it('is described as enabled on the counters table, on its attribute; refused twice; not found for a missing table', async () => {
    const described = await client.send(new DescribeTimeToLiveCommand({ TableName: TABLES.countersTable }));
    expect(described.TimeToLiveDescription).toEqual({
      TimeToLiveStatus: 'ENABLED',
      AttributeName: 'expires_at',
    });
    await expect(
      client.send(
        new UpdateTimeToLiveCommand({
          TableName: TABLES.countersTable,
          TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException', message: 'TimeToLive is already enabled' });
    await expect(
      client.send(new DescribeTimeToLiveCommand({ TableName: 'no-such-table' })),
    ).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('is forgotten with its table: a table created again has none, until enabled again', async () => {
    const input = {
      TableName: 'ttl-again',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' as const }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' as const }],
      BillingMode: 'PAY_PER_REQUEST' as const,
    };
    await client.send(new CreateTableCommand(input));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: 'ttl-again',
        TimeToLiveSpecification: { AttributeName: 'at', Enabled: true },
      }),
    );
    await client.send(new DeleteTableCommand({ TableName: 'ttl-again' }));
    await client.send(new CreateTableCommand(input));
    const described = await client.send(new DescribeTimeToLiveCommand({ TableName: 'ttl-again' }));
    expect(described.TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'DISABLED' });
  });
});

describe('the sweep', () => {
  it('deletes the items whose TTL has passed, and only those', async () => {
    const item = (pk: string, expires?: AttributeValue) =>
      client.send(
        new PutItemCommand({
          TableName: TABLES.countersTable,
          Item: expires ? { pk: { S: pk }, expires_at: expires } : { pk: { S: pk } },
        }),
      );
    await item('expired', { N: String(NOW - 10) });
    await item('future', { N: String(NOW + 3600) });
    await item('not-a-number', { S: String(NOW - 10) });
    await item('no-ttl');
    // DynamoDB ignores TTLs more than five years in the past.
    await item('ancient', { N: String(NOW - 6 * 365 * 24 * 3600) });
    expect(await sweep()).toBe(1);
    expect(await countersNow()).toEqual(['ancient', 'future', 'no-ttl', 'not-a-number']);
    expect(await sweep(NOW + 7200)).toBe(1);
    expect(await countersNow()).toEqual(['ancient', 'no-ttl', 'not-a-number']);
  });
});
