/**
 * What `wireProxy` builds from a configuration and credentials: the object store on the configured bucket and
 * prefix, key lookups (cached) and metering on the configured tables, each signed by the credentials asked for
 * its own endpoint; the dependencies given instead; the injected logger, clock and request ids really used, by
 * every line and every time of the request path. Against s3rver and dynalite on loopback ports.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { type LocalServer, startDynamo, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables } from '../../admin/tables.js';
import type { LeanDynamo } from '../../aws/dynamodb.js';
import { LOOPBACK_CREDENTIALS } from '../../aws/env.js';
import { dynamoClient, leanDynamo, s3Client } from '../../aws/sdk.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyLogLine, ProxyRequest } from '../../proxy/core/types.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { type ProxyOverrides, wireProxy } from '../../proxy/wiring.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { issueKey, revokeKey } from '../helpers/admin.js';
import { objectsOf, PREFIX, publishFixture, serversEnv } from '../helpers/proxy.js';

const tables = { keysTable: 'wired-keys', countersTable: 'wired-counters' };
let s3: LocalServer & { bucket: string };
let dynamo: LocalServer;
let ddb: DynamoDBClient;
let lean: LeanDynamo;

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3('catalogue-wiring'), startDynamo()]);
  ddb = dynamoClient({ endpoint: dynamo.endpoint });
  lean = leanDynamo(dynamo.endpoint);
  await createTables(ddb, tables);
  const s3client = s3Client({ endpoint: s3.endpoint });
  await publishFixture(
    new S3ObjectStore({ client: s3client, bucket: s3.bucket }),
    PREFIX,
    objectsOf(['tags?sort=id']),
  );
  s3client.destroy();
});
afterAll(async () => {
  ddb?.destroy();
  await lean?.close();
  await Promise.all([s3?.dispose(), dynamo?.dispose()]);
});

function env(overrides: Record<string, string> = {}) {
  return serversEnv({ s3, dynamo, tables }, overrides);
}

/** The proxy wired from `env`, recording which endpoints credentials were asked for and every line. */
function wired(settings: Record<string, string>, overrides: ProxyOverrides = {}) {
  const signedFor: (string | undefined)[] = [];
  const lines: ProxyLogLine[] = [];
  const handle = wireProxy(
    loadConfig(env(settings)),
    (endpoint) => {
      signedFor.push(endpoint);
      return () => LOOPBACK_CREDENTIALS;
    },
    { log: (line) => lines.push(line), ...overrides },
  );
  return { handle, signedFor, lines };
}

const get = (path: string, key: string): ProxyRequest => ({
  method: 'GET',
  path,
  query: '',
  headers: { authorization: `Bearer ${key}` },
});

describe('what wireProxy builds from the configuration', () => {
  it('reads the configured bucket and prefix, looks keys up and meters in the configured tables', async () => {
    const { key, record } = await issueKey({ dynamo: lean, ...tables }, { tier: 'free' });
    const clock = { ms: Date.UTC(2026, 10, 25, 12, 0, 0) };
    const { handle, signedFor, lines } = wired(
      {},
      { now: () => new Date(clock.ms), requestId: () => 'req_wired' },
    );

    const answer = await handle(get('/v1/tags', key));

    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toBe('req_wired');
    expect(answer.headers['x-ratelimit-remaining-minute']).toBe('59');
    // Each client signs for its own endpoint: S3 once, DynamoDB once (one pool for lookups and metering).
    expect(signedFor).toEqual([s3.endpoint, dynamo.endpoint]);
    const counters = await ddb.send(new ScanCommand({ TableName: tables.countersTable }));
    expect(counters.Items).toHaveLength(1);
    expect(JSON.stringify(counters.Items)).toContain(record.keyId);
    expect(lines).toEqual([
      expect.objectContaining({
        time: new Date(clock.ms).toISOString(),
        request_id: 'req_wired',
        status: 200,
        key_id: record.keyId,
      }),
    ]);
  });

  it('caches key lookups for KEY_CACHE_TTL_MS of the injected clock', async () => {
    const admin = { dynamo: lean, ...tables };
    const { key, record } = await issueKey(admin, { tier: 'free' });
    const clock = { ms: Date.UTC(2026, 10, 25, 13, 0, 0) };
    const { handle } = wired({ KEY_CACHE_TTL_MS: '60000' }, { now: () => new Date(clock.ms) });
    expect((await handle(get('/v1/tags', key))).status).toBe(200);

    await revokeKey(admin, record.keyId);
    clock.ms += 59_000;
    expect((await handle(get('/v1/tags', key))).status).toBe(200); // still cached: revocation within the TTL
    clock.ms += 1_000;
    expect((await handle(get('/v1/tags', key))).status).toBe(401); // looked up again: revoked
  });

  it('uses the dependencies given instead of building them, and asks no credentials for them', async () => {
    const key = `pk_live_${'W'.repeat(22)}`;
    const keys = new MemoryKeyStore();
    keys.add(key, { keyId: 'key_given', tier: 'free' });
    const quota = new MemoryQuotaMeter();
    const { handle, signedFor, lines } = wired({}, { keys, quota });

    expect((await handle(get('/v1/tags', key))).status).toBe(200);
    expect(signedFor).toEqual([s3.endpoint]);
    expect(lines.at(-1)).toMatchObject({ status: 200, key_id: 'key_given' });
  });

  it('gives each dependency call DEPENDENCY_TIMEOUT_MS', async () => {
    const key = `pk_live_${'T'.repeat(22)}`;
    const keys = new MemoryKeyStore();
    keys.add(key, { keyId: 'key_patient', tier: 'free' });
    const never = { get: () => new Promise<never>(() => {}) };
    const { handle, lines } = wired({ DEPENDENCY_TIMEOUT_MS: '150' }, { keys, objects: never });

    const started = performance.now();
    const answer = await handle(get('/v1/tags', key));
    const waited = performance.now() - started;

    expect(answer.status).toBe(503);
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(waited).toBeLessThan(2_000);
    expect(lines.at(-1)).toMatchObject({
      status: 503,
      error: expect.stringContaining('timed out after 150 ms'),
    });
  });
});

describe("the proxy's own lines go to the injected logger, timed by the injected clock", () => {
  it('a configuration no client can use', () => {
    const { lines } = wired({ CATALOGUE_BUCKET: '' }, { now: () => new Date(0) });
    expect(lines).toEqual([
      expect.objectContaining({
        time: '1970-01-01T00:00:00.000Z',
        level: 'error',
        message: 'configuration incomplete',
      }),
    ]);
  });

  it('a cursor secret that cannot be read', async () => {
    const key = `pk_live_${'S'.repeat(22)}`;
    const keys = new MemoryKeyStore();
    keys.add(key, { keyId: 'key_secret', tier: 'free' });
    const { handle, lines } = wired(
      {
        CURSOR_SECRET: '',
        CURSOR_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:cursor-AbCdEf',
      },
      {
        keys,
        quota: new MemoryQuotaMeter(),
        now: () => new Date(86_400_000),
        fetchCursorSecret: () => Promise.reject(new Error('denied')),
      },
    );

    const answer = await handle(get('/v1/modules', key));
    await handle.settle?.();

    expect(answer.status).toBe(503);
    expect(lines).toContainEqual({
      time: '1970-01-02T00:00:00.000Z',
      level: 'error',
      message: 'cursor secret could not be read: denied',
    });
    expect(lines.at(-1)).toMatchObject({ time: '1970-01-02T00:00:00.000Z', status: 503 });
  });
});
