/**
 * The request path's one client: createProxy (npm start, tests, benchmarks) reads objects, looks keys up and
 * meters through the lean signed requests the Lambda function uses, and never through the AWS SDK.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startDynamo, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTables } from '../../admin/tables.js';
import { dynamoClient, leanDynamo, s3Client } from '../../aws/sdk.js';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyResponse } from '../../proxy/core/types.js';
import { LeanCounterTransport } from '../../proxy/quota/dynamo-lean.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { LeanS3ObjectStore } from '../../store/objects/s3-lean.js';
import { issueKey } from '../helpers/admin.js';
import { CURSOR_SECRET, objectsOf, PREFIX, publishFixture } from '../helpers/proxy.js';

const tables = { keysTable: 'hot-keys', countersTable: 'hot-counters' };
let s3: LocalServer & { bucket: string };
let dynamo: LocalServer;
let key: string;

const env = (overrides: Record<string, string> = {}) => ({
  CATALOGUE_BUCKET: s3?.bucket ?? 'b',
  CATALOGUE_PREFIX: PREFIX,
  S3_ENDPOINT: s3?.endpoint ?? 'http://127.0.0.1:1',
  KEYS_TABLE: tables.keysTable,
  COUNTERS_TABLE: tables.countersTable,
  DYNAMODB_ENDPOINT: dynamo?.endpoint ?? 'http://127.0.0.1:1',
  CURSOR_SECRET,
  ...overrides,
});

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3('catalogue-hot'), startDynamo()]);
  const s3client = s3Client({ endpoint: s3.endpoint });
  const ddb = dynamoClient({ endpoint: dynamo.endpoint });
  const lean = leanDynamo(dynamo.endpoint);
  try {
    await createTables(ddb, tables);
    await publishFixture(
      new S3ObjectStore({ client: s3client, bucket: s3.bucket }),
      PREFIX,
      objectsOf([], [101]),
    );
    ({ key } = await issueKey({ dynamo: lean, ...tables }, { tier: 'free' }));
  } finally {
    s3client.destroy();
    ddb.destroy();
    await lean.close();
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  await Promise.all([s3?.dispose(), dynamo?.dispose()]);
});

describe("the request path's client", () => {
  it('createProxy reads, looks keys up and meters through the lean client, never through the SDK', async () => {
    const leanGet = vi.spyOn(LeanS3ObjectStore.prototype, 'get');
    const leanRead = vi.spyOn(LeanCounterTransport.prototype, 'getItem');
    const leanWrite = vi.spyOn(LeanCounterTransport.prototype, 'updateItem');
    const sdkGet = vi.spyOn(S3ObjectStore.prototype, 'get');
    const sdkS3 = vi.spyOn(S3Client.prototype, 'send');
    const sdkDynamo = vi.spyOn(DynamoDBClient.prototype, 'send');
    // HOT_PATH_CLIENT=sdk chose the SDK's clients before there was one client: it is not read any more.
    const handle = createProxy(loadConfig(env({ HOT_PATH_CLIENT: 'sdk' })), { log: () => {} });
    const get = (headers: Record<string, string> = {}): Promise<ProxyResponse> =>
      handle({
        method: 'GET',
        path: '/v1/modules/101',
        query: '',
        headers: { authorization: `Bearer ${key}`, ...headers },
      });

    const first = await get();
    const again = await get({ 'if-none-match': first.headers.etag! });

    expect([first.status, again.status]).toEqual([200, 304]);
    expect(Number(first.headers['x-ratelimit-remaining-minute']) - 1).toBe(
      Number(again.headers['x-ratelimit-remaining-minute']),
    );
    // The pointer, the shard and the detail; the key; a metering write per request.
    expect(leanGet.mock.calls.length).toBeGreaterThanOrEqual(3);
    expect(leanRead.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(leanWrite.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect([sdkGet, sdkS3, sdkDynamo].map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
    vi.restoreAllMocks();
  });
});
