/**
 * aws/dynamodb.ts, key administration's lean DynamoDB client, against dynalite — answer for answer as the AWS
 * SDK answers — and behind a fault proxy: errors named as the SDK names them, throttling and 5xx answers sent
 * again within the SDK's attempts, a cut or unreadable answer and a call ended by its signal as faults without
 * a status (they may have landed).
 */
import { GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeanDynamo } from '../../aws/dynamodb.js';
import { credentialProvider } from '../../aws/sdk.js';
import type { AwsCallError } from '../../aws/signed.js';
import { KEYS_SCHEMA } from '../../tables/schema.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';
import { type FaultProxy, startFaultProxy } from '../helpers/fault-proxy.js';

let db: DynamoFixture;
let faults: FaultProxy;
let lean: LeanDynamo;

beforeAll(async () => {
  db = await dynamoFixture();
  faults = await startFaultProxy({ targetPort: db.server.port });
  lean = new LeanDynamo({
    endpoint: faults.endpoint,
    region: 'us-east-1',
    credentials: credentialProvider(faults.endpoint),
  });
});
afterAll(async () => {
  await lean?.close();
  await faults?.close();
  await db?.dispose();
});

const item = (hash: string) => ({
  [KEYS_SCHEMA.partitionKey]: { S: hash },
  key_id: { S: `key_${hash.slice(0, 10)}` },
  owner: { S: 'lean-owner' },
  created: { S: '2026-11-24T00:00:00.000Z' },
});
const failure = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: AwsCallError) => ({ name: error.name, status: error.status }),
  );

describe('LeanDynamo answers as the SDK does (dynalite)', () => {
  it('PutItem, GetItem and Query: the same items; a failed condition named as the SDK names it', async () => {
    const put = { TableName: db.keysTable, Item: item('aaaaaaaaaaaaaaaa') };
    await lean.call('PutItem', put);
    const key = { TableName: db.keysTable, Key: { [KEYS_SCHEMA.partitionKey]: { S: 'aaaaaaaaaaaaaaaa' } } };
    const query = {
      TableName: db.keysTable,
      IndexName: KEYS_SCHEMA.ownerIndex,
      KeyConditionExpression: '#o = :o',
      ExpressionAttributeNames: { '#o': 'owner' },
      ExpressionAttributeValues: { ':o': { S: 'lean-owner' } },
    };

    expect((await lean.call('GetItem', key)).Item).toEqual(
      (await db.client.send(new GetItemCommand(key))).Item,
    );
    expect((await lean.call('Query', query)).Items).toEqual(
      (await db.client.send(new QueryCommand(query))).Items,
    );
    const conditional = { ...put, ConditionExpression: 'attribute_not_exists(key_hash)' };
    const sdk = await failure(db.client.send(new PutItemCommand(conditional)));
    expect(await failure(lean.call('PutItem', conditional))).toEqual({ name: sdk?.name, status: 400 });
  });
});

describe('LeanDynamo under faults', () => {
  it('sends a throttled call again within three attempts, then answers the throttling as an error', async () => {
    faults.seen.splice(0);
    faults.setRule(() => ({
      status: 400,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
        message: 'slow down',
      }),
    }));
    try {
      const answer = await failure(
        lean.call('GetItem', { TableName: db.keysTable, Key: { key_hash: { S: 'x' } } }),
      );
      expect(answer).toEqual({ name: 'ThrottlingException', status: 400 });
      expect(faults.seen).toHaveLength(3);
    } finally {
      faults.setRule(undefined);
    }
  });

  it('sends a call again after a 500 and takes the second answer', async () => {
    let first = true;
    faults.setRule(() => {
      if (!first) return undefined;
      first = false;
      return { status: 500, body: '{"__type":"InternalServerError","message":"oops"}' };
    });
    try {
      const answer = await lean.call('GetItem', {
        TableName: db.keysTable,
        Key: { key_hash: { S: 'aaaaaaaaaaaaaaaa' } },
      });
      expect(answer.Item).toBeDefined();
    } finally {
      faults.setRule(undefined);
    }
  });

  it.each(['truncate', 'short-length', 'garbage'] as const)(
    'answers a %s answer as a fault without a status',
    async (action) => {
      faults.setRule(() => action);
      try {
        const answer = await failure(
          lean.call('GetItem', { TableName: db.keysTable, Key: { key_hash: { S: 'aaaaaaaaaaaaaaaa' } } }),
        );
        expect(answer?.status).toBeUndefined();
        expect(answer?.name).toMatch(/SerializationException|ECONNRESET|Error|aborted/);
      } finally {
        faults.setRule(undefined);
      }
    },
  );

  it('ends a call whose answer never comes by its signal: AbortError', async () => {
    faults.setRule(() => 'hold-after');
    try {
      const signal = AbortSignal.timeout(300);
      const answer = await failure(
        lean.call('GetItem', { TableName: db.keysTable, Key: { key_hash: { S: 'x' } } }, signal),
      );
      expect(answer).toEqual({ name: 'AbortError', status: undefined });
    } finally {
      faults.setRule(undefined);
    }
  });
});
