/**
 * The real wiring (`createProxy(loadConfig(env))`): the object store, CachedKeyStore(DynamoKeyStore) and
 * DynamoQuotaMeter against s3rver and dynalite, through the Lambda adapter's local runtime.
 */
import { Writable } from 'node:stream';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startDynamo, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables } from '../../admin/tables.js';
import type { LeanDynamo } from '../../aws/dynamodb.js';
import { dynamoClient, leanDynamo, s3Client } from '../../aws/sdk.js';
import { createLambdaHandler, localRuntime, type ResponsePrelude } from '../../proxy/adapters/lambda.js';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyHandler, RequestLogLine } from '../../proxy/core/types.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { issueKey, revokeKey } from '../helpers/admin.js';
import { loadResponseValidator } from '../helpers/openapi.js';
import { objectsOf, PREFIX, publishFixture, serversEnv } from '../helpers/proxy.js';

const openapi = loadResponseValidator();
const tables = { keysTable: 'keys', countersTable: 'counters' };
let s3: LocalServer & { bucket: string };
let dynamo: LocalServer;
let s3client: S3Client;
let ddb: DynamoDBClient;
let lean: LeanDynamo;
let handle: ProxyHandler;
const logs: RequestLogLine[] = [];

function env(overrides: Record<string, string> = {}) {
  return serversEnv({ s3, dynamo, tables }, { KEY_CACHE_TTL_MS: '0', ...overrides });
}

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3('catalogue-app'), startDynamo()]);
  s3client = s3Client({ endpoint: s3.endpoint });
  ddb = dynamoClient({ endpoint: dynamo.endpoint });
  lean = leanDynamo(dynamo.endpoint);
  await createTables(ddb, tables);
  await publishFixture(
    new S3ObjectStore({ client: s3client, bucket: s3.bucket }),
    PREFIX,
    objectsOf(['tags?sort=id'], [101]),
  );
  handle = createProxy(loadConfig(env()), { log: (line) => 'status' in line && logs.push(line) });
});
afterAll(async () => {
  s3client?.destroy();
  ddb?.destroy();
  await lean?.close();
  await Promise.all([s3?.dispose(), dynamo?.dispose()]);
});

/** Invoke through the Lambda adapter as a function URL behind CloudFront would. */
async function invoke(method: string, target: string, key?: string, via = handle) {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  const [rawPath, rawQueryString = ''] = target.split('?') as [string, string?];
  const headers: Record<string, string> = { authorization: 'AWS4-HMAC-SHA256 Credential=oac' };
  if (key) headers['x-catalogue-authorization'] = `Bearer ${key}`;
  await createLambdaHandler(via, localRuntime)(
    { rawPath, rawQueryString, headers, requestContext: { http: { method } } },
    stream,
  );
  const wire = Buffer.concat(chunks);
  const split = wire.indexOf(Buffer.alloc(8));
  const prelude = JSON.parse(wire.subarray(0, split).toString()) as ResponsePrelude;
  const body = wire.subarray(split + 8);
  openapi.assert({ method, path: rawPath, status: prelude.statusCode, headers: prelude.headers, body });
  return { status: prelude.statusCode, headers: prelude.headers, body };
}

describe('createProxy with real dependencies', () => {
  it('serves an issued free key with its published limits, and logs the key id only', async () => {
    const { key, record } = await issueKey({ dynamo: lean, ...tables }, { tier: 'free' });
    const answer = await invoke('GET', '/v1/modules/101?include=tags', key);
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'x-ratelimit-limit-month': '5000',
      'x-ratelimit-remaining-month': '4999',
      'x-ratelimit-limit-minute': '60',
    });
    expect(logs.at(-1)).toMatchObject({ key_id: record.keyId, route: '/v1/modules/{id}', status: 200 });
    expect(JSON.stringify(logs)).not.toContain(key);
  });

  it('meters exactly: 70 concurrent requests of one free key in one minute admit exactly 60', async () => {
    const secondsLeft = 60 - new Date().getUTCSeconds();
    if (secondsLeft < 10) await new Promise((resolve) => setTimeout(resolve, secondsLeft * 1000 + 100));
    const { key } = await issueKey({ dynamo: lean, ...tables }, { tier: 'free' });
    // Seventy contending conditional writes on one item take dynalite a while on a busy machine.
    const patient = createProxy(loadConfig(env({ DEPENDENCY_TIMEOUT_MS: '30000' })), { log: () => {} });
    const answers = await Promise.all(
      Array.from({ length: 70 }, () => invoke('OPTIONS', '/v1/tags', key, patient)),
    );
    const statuses = answers.map((a) => a.status);
    expect(new Set(statuses)).toEqual(new Set([204, 429]));
    expect(statuses.filter((s) => s === 204)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });

  it('a revoked key is refused once the cache lets go (TTL 0 here)', async () => {
    const admin = { dynamo: lean, ...tables };
    const { key, record } = await issueKey(admin, { tier: 'free' });
    expect((await invoke('GET', '/v1/tags', key)).status).toBe(200);
    await revokeKey(admin, record.keyId);
    const answer = await invoke('GET', '/v1/tags', key);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body.toString()).error.code).toBe('invalid_key');
  });

  it('the key and quota tables being down give their 503s', async () => {
    const { key } = await issueKey({ dynamo: lean, ...tables }, { tier: 'free' });
    const cached = createProxy(
      loadConfig(env({ KEY_CACHE_TTL_MS: '60000', DEPENDENCY_TIMEOUT_MS: '1000' })),
      { log: () => {} },
    );
    expect((await invoke('GET', '/v1/tags', key, cached)).status).toBe(200);
    await dynamo.stop();
    try {
      const quotaDown = await invoke('GET', '/v1/tags', key, cached); // the key is still cached
      expect(JSON.parse(quotaDown.body.toString()).error.code).toBe('quota_unavailable');
      const keysDown = await invoke('GET', '/v1/tags', key);
      expect(JSON.parse(keysDown.body.toString()).error.code).toBe('authentication_unavailable');
    } finally {
      await dynamo.start();
    }
  });

  it('an incomplete environment answers 503 configuration_error, after 405 and 401', async () => {
    const broken = createProxy(loadConfig({ CATALOGUE_BUCKET: 'b' }), { log: () => {} });
    expect((await invoke('DELETE', '/v1/tags', undefined, broken)).status).toBe(405);
    expect((await invoke('GET', '/v1/tags', undefined, broken)).status).toBe(401);
    const answer = await invoke('GET', '/v1/tags', `pk_live_${'Z'.repeat(22)}`, broken);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body.toString()).error.code).toBe('configuration_error');
  });
});
