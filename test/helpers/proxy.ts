/**
 * The proxy over the real builder output of `fixtures/catalogue`, served from s3rver and read through the
 * request path's one client (lean signed requests, as the Lambda function reads), with in-memory keys and
 * quota. Every answer is checked against `proxy/openapi.json` before a test sees it.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { type LocalServer, startS3 } from '@catalogue/local-aws';
import { credentialProvider, s3Client } from '../../aws/sdk.js';
import { renderCatalogue } from '../../builder/render/full.js';
import { loadSnapshot } from '../../builder/snapshot/load.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import type { ConfigOutcome, ProxyConfig } from '../../proxy/config.js';
import { createHandler } from '../../proxy/core/handler.js';
import type { ProxyHandler, ProxyResponse, RequestLogLine } from '../../proxy/core/types.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import type {
  GetOptions,
  GetOutcome,
  ObjectStore,
  WritableObjectStore,
} from '../../store/objects/interface.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { LeanS3ObjectStore } from '../../store/objects/s3-lean.js';
import type { CatalogueIndex } from '../../store/pointer.js';
import { loadResponseValidator, type ResponseValidator } from './openapi.js';

export const FIXTURE = new URL('../../fixtures/catalogue', import.meta.url).pathname;
export const PREFIX = 'catalogue/';
export const CURSOR_SECRET = 'test-cursor-secret-of-at-least-32-characters';
/** Test keys; never real ones. */
export const KEYS = {
  main: `pk_live_${'M'.repeat(22)}`,
  free: `pk_live_${'F'.repeat(22)}`,
  revoked: `pk_live_${'R'.repeat(22)}`,
  expired: `pk_live_${'E'.repeat(22)}`,
  unknown: `pk_live_${'U'.repeat(22)}`,
} as const;

export function testConfig(overrides: Partial<ProxyConfig> = {}): ConfigOutcome {
  return {
    ok: true,
    config: {
      bucket: 'catalogue-test',
      prefix: PREFIX,
      s3Endpoint: undefined,
      keysTable: 'keys',
      countersTable: 'counters',
      dynamodbEndpoint: undefined,
      cursorSecret: CURSOR_SECRET,
      keyCacheTtlMs: 0,
      keyCacheMaxEntries: 10,
      pointerTtlMs: 60_000,
      dependencyTimeoutMs: 2_000,
      // No byte cache by default: each request's object reads are visible (budget and fault suites);
      // suites about the cache turn it on.
      byteCacheBytes: 0,
      ...overrides,
    },
  };
}

/** An ObjectStore that records every read: the per-request budget is asserted from it. */
export class CountingObjectStore implements ObjectStore {
  readonly reads: { key: string; options: GetOptions }[] = [];
  constructor(readonly inner: ObjectStore) {}
  get(key: string, options: GetOptions = {}): Promise<GetOutcome> {
    const { signal: _signal, ...rest } = options;
    this.reads.push({ key, options: rest });
    return this.inner.get(key, options);
  }
  /** Reads since the last call. */
  take(): { key: string; options: GetOptions }[] {
    return this.reads.splice(0);
  }
}

export interface Answer extends ProxyResponse {
  // biome-ignore lint/suspicious/noExplicitAny: tests look into bodies freely; the OpenAPI check types them.
  json(): any;
}

export interface Stack {
  s3: LocalServer & { bucket: string };
  /** The SDK's S3 client, for setting up (publishing, deleting objects), never the request path's reads. */
  client: S3Client;
  /** What the proxy reads through: the lean S3 client, counted. */
  objects: CountingObjectStore;
  keys: MemoryKeyStore;
  quota: MemoryQuotaMeter;
  snapshot: Snapshot;
  index: CatalogueIndex;
  /** Object ids of the index shards of the published version. */
  shards: readonly string[];
  logs: RequestLogLine[];
  openapi: ResponseValidator;
  handle: ProxyHandler;
  /** A handler over the same stores with other dependencies or configuration. */
  handler(overrides?: Partial<Parameters<typeof createHandler>[0]>): ProxyHandler;
  /** Call the proxy like a client (path may carry `?query`), and check the answer against the OpenAPI document. */
  call(
    method: string,
    target: string,
    headers?: Record<string, string | undefined>,
    handle?: ProxyHandler,
  ): Promise<Answer>;
  dispose(): Promise<void>;
}

/** Which objects to upload: s3rver takes ~14 ms per object, so suites that need few can say which. */
export type ObjectSelection = (index: CatalogueIndex) => Iterable<string>;

/** The objects of these list variants and details. */
export function objectsOf(
  lists: string[],
  modules: number[] = [],
  manufacturers: number[] = [],
): ObjectSelection {
  return (index) => [
    ...lists.map((key) => index.lists[key]![0]),
    ...modules.map((id) => index.modules[id]!),
    ...manufacturers.map((id) => index.manufacturers[id]!),
  ];
}

/** Publish the fixture (objects, shards, pointer) into any store: s3rver for the stack, memory elsewhere. */
export async function publishFixture(store: WritableObjectStore, prefix = PREFIX, select?: ObjectSelection) {
  const loaded = await loadSnapshot(FIXTURE);
  if (!loaded.ok)
    throw new Error(`fixture does not validate: ${JSON.stringify(loaded.problems.slice(0, 5))}`);
  const rendered = renderCatalogue(loaded.snapshot);
  // The index shards always: without them nothing can be found.
  const wanted = select && new Set([...select(rendered.index), ...rendered.pointer.shards]);
  const entries = [...rendered.objects].filter(([id]) => !wanted || wanted.has(id));
  for (let i = 0; i < entries.length; i += 16) {
    await Promise.all(entries.slice(i, i + 16).map(([id, bytes]) => store.put(`${prefix}o/${id}`, bytes)));
  }
  await store.put(`${prefix}current.json`, rendered.pointerBytes, { contentType: 'application/json' });
  return { snapshot: loaded.snapshot, index: rendered.index, shards: rendered.pointer.shards };
}

export async function startStack(select?: ObjectSelection): Promise<Stack> {
  const s3 = await startS3('catalogue-test');
  const client = s3Client({ endpoint: s3.endpoint });
  const store = new S3ObjectStore({ client, bucket: s3.bucket });
  const { snapshot, index, shards } = await publishFixture(store, PREFIX, select);
  const lean = new LeanS3ObjectStore({
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    credentials: credentialProvider(s3.endpoint),
  });
  const objects = new CountingObjectStore(lean);
  const keys = new MemoryKeyStore();
  keys.add(KEYS.main, {
    tier: 'partner',
    limits: { minute: 1_000_000, month: 10_000_000 },
    keyId: 'key_main',
  });
  keys.add(KEYS.free, { keyId: 'key_free' });
  keys.add(KEYS.revoked, { status: 'revoked', keyId: 'key_revoked' });
  keys.add(KEYS.expired, { keyId: 'key_expired', expires: '2026-01-01T00:00:00.000Z' });
  const quota = new MemoryQuotaMeter();
  const logs: RequestLogLine[] = [];
  const openapi = loadResponseValidator();
  let counter = 0;
  const handler = (overrides: Partial<Parameters<typeof createHandler>[0]> = {}) =>
    createHandler({
      objects,
      keys,
      quota,
      config: testConfig(),
      now: () => new Date(),
      requestId: () => `req_test${++counter}`,
      log: (line) => logs.push(line),
      ...overrides,
    });
  const handle = handler();
  const call: Stack['call'] = async (
    method,
    target,
    headers = { authorization: `Bearer ${KEYS.main}` },
    via = handle,
  ) => {
    const question = target.indexOf('?');
    const response = await via({
      method,
      path: question < 0 ? target : target.slice(0, question),
      query: question < 0 ? '' : target.slice(question + 1),
      headers,
    });
    openapi.assert({ method, path: question < 0 ? target : target.slice(0, question), ...response });
    return { ...response, json: () => JSON.parse(response.body?.toString() ?? 'null') };
  };
  return {
    s3,
    client,
    objects,
    keys,
    quota,
    snapshot,
    index,
    shards,
    logs,
    openapi,
    handle,
    handler,
    call,
    async dispose() {
      client.destroy();
      await lean.close();
      await s3.dispose();
    },
  };
}

/**
 * The proxy's environment for a catalogue published under PREFIX in `s3`'s bucket and the tables on `dynamo`.
 * @example loadConfig(serversEnv({ s3, dynamo, tables }, { KEY_CACHE_TTL_MS: '0' }))
 */
export function serversEnv(
  servers: {
    s3: LocalServer & { bucket: string };
    dynamo: LocalServer;
    tables: { keysTable: string; countersTable: string };
  },
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    CATALOGUE_BUCKET: servers.s3.bucket,
    CATALOGUE_PREFIX: PREFIX,
    S3_ENDPOINT: servers.s3.endpoint,
    KEYS_TABLE: servers.tables.keysTable,
    COUNTERS_TABLE: servers.tables.countersTable,
    DYNAMODB_ENDPOINT: servers.dynamo.endpoint,
    CURSOR_SECRET,
    ...overrides,
  };
}
