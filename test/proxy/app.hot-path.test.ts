/**
 * HOT_PATH_CLIENT: read once from the environment, and wired by createProxy to the client it names for the
 * object read and the metering write — the same answers and the same metering either way.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTables } from '../../admin/tables.js';
import { dynamoClient, s3Client } from '../../aws/sdk.js';
import { type LocalServer, startDynamo, startS3 } from '../../local/servers.js';
import { createProxy } from '../../proxy/app.js';
import { DEFAULT_HOT_PATH_CLIENT, HOT_PATH_CLIENTS, loadConfig } from '../../proxy/config.js';
import type { ProxyResponse } from '../../proxy/core/types.js';
import { LeanCounterTransport } from '../../proxy/quota/dynamo-lean.js';
import { SdkCounterTransport } from '../../proxy/quota/dynamo-transport.js';
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
  try {
    await createTables(ddb, tables);
    await publishFixture(
      new S3ObjectStore({ client: s3client, bucket: s3.bucket }),
      PREFIX,
      objectsOf([], [101]),
    );
    ({ key } = await issueKey({ client: ddb, ...tables }, { tier: 'free' }));
  } finally {
    s3client.destroy();
    ddb.destroy();
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  await Promise.all([s3?.dispose(), dynamo?.dispose()]);
});

describe('HOT_PATH_CLIENT', () => {
  it(`is ${DEFAULT_HOT_PATH_CLIENT} by default, takes lean or sdk, and names itself when malformed`, () => {
    expect(loadConfig(env())).toMatchObject({ ok: true, config: { hotPathClient: DEFAULT_HOT_PATH_CLIENT } });
    for (const client of HOT_PATH_CLIENTS) {
      expect(loadConfig(env({ HOT_PATH_CLIENT: client }))).toMatchObject({
        config: { hotPathClient: client },
      });
    }
    expect(loadConfig(env({ HOT_PATH_CLIENT: 'fast' }))).toEqual({
      ok: false,
      problems: ['HOT_PATH_CLIENT must be one of lean, sdk'],
    });
  });

  it.each(HOT_PATH_CLIENTS)('%s: createProxy reads and meters through that client', async (client) => {
    const leanGet = vi.spyOn(LeanS3ObjectStore.prototype, 'get');
    const sdkGet = vi.spyOn(S3ObjectStore.prototype, 'get');
    const leanWrite = vi.spyOn(LeanCounterTransport.prototype, 'updateItem');
    const sdkWrite = vi.spyOn(SdkCounterTransport.prototype, 'updateItem');
    const handle = createProxy(loadConfig(env({ HOT_PATH_CLIENT: client })), { log: () => {} });
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
    const used = {
      lean: leanGet.mock.calls.length + leanWrite.mock.calls.length,
      sdk: sdkGet.mock.calls.length + sdkWrite.mock.calls.length,
    };
    expect(used[client]).toBeGreaterThanOrEqual(4);
    expect(used[client === 'lean' ? 'sdk' : 'lean']).toBe(0);
    vi.restoreAllMocks();
  });
});
