/**
 * A month's counter item, as the request path's meter writes it (proxy/quota/dynamo.ts), expires with the
 * counters table's TTL declared by createTables, once its retention is over — on the local DynamoDB, which honours
 * TTL as DynamoDB does (@catalogue/local-aws, dynamo-ttl.ts; before issue 40 it stayed for ever).
 */
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { type LocalServer, startDynamo, sweepExpired } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables } from '../../../admin/tables.js';
import { dynamoClient } from '../../../aws/sdk.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { leanTransport } from '../../helpers/dynamo.js';

const TABLES = { keysTable: 'ttl-keys', countersTable: 'ttl-counters' };
let server: LocalServer;
let client: DynamoDBClient;

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
const sweep = (now: number) => sweepExpired(server.endpoint, now);

describe('the counters table under TTL', () => {
  it("takes a month's counter item, as the meter writes it, once its retention is over", async () => {
    const meter = new DynamoQuotaMeter({
      transport: leanTransport(server.endpoint),
      table: TABLES.countersTable,
    });
    const key = { keyId: 'key_ttl', limits: { minute: 60, month: 5000 } } as never;
    const month = new Date('2026-01-15T10:00:00Z');
    expect(await meter.meter(key, month)).toMatchObject({ ok: true });
    const counter = { TableName: TABLES.countersTable, Key: { pk: { S: 'key_ttl#2026-01' } } };
    const expires = Number((await client.send(new GetItemCommand(counter))).Item?.expires_at?.N);
    // Kept through the next month (usage stays readable), then swept.
    expect(await sweep(expires - 1)).toBe(0);
    expect((await client.send(new GetItemCommand(counter))).Item).toBeDefined();
    expect(await sweep(expires + 1)).toBe(1);
    expect((await client.send(new GetItemCommand(counter))).Item).toBeUndefined();
  });
});
