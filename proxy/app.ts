/** Wiring: the proxy core with its real dependencies (S3, DynamoDB), built from the configuration. */
import { credentialProvider, dynamoClient, regionOf, s3Client } from '../aws/sdk.js';
import type { ObjectStore } from '../store/objects/interface.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { LeanS3ObjectStore } from '../store/objects/s3-lean.js';
import { ByteCache } from './cache/bytes.js';
import { type ConfigOutcome, DEFAULT_HOT_PATH_CLIENT, type ProxyConfig } from './config.js';
import { createHandler } from './core/handler.js';
import type { ProxyDependencies, ProxyHandler, RequestLogLine } from './core/types.js';
import { createSecretProxy, secretReader } from './cursor-secret.js';
import { ConfigurationError } from './errors.js';
import { CachedKeyStore } from './keys/cached.js';
import { DynamoKeyStore } from './keys/dynamo.js';
import type { KeyStore } from './keys/interface.js';
import { newRequestId } from './log/request-id.js';
import { logJson } from './log/sink.js';
import { DynamoQuotaMeter } from './quota/dynamo.js';
import { LeanCounterTransport } from './quota/dynamo-lean.js';
import { SdkCounterTransport } from './quota/dynamo-transport.js';
import type { QuotaMeter } from './quota/interface.js';

export { logJson } from './log/sink.js';

export interface ProxyOverrides {
  log?: (line: RequestLogLine) => void;
  /** Reads the cursor secret when the configuration names it by ARN (tests); Secrets Manager otherwise. */
  fetchCursorSecret?: () => Promise<string>;
  now?: () => Date;
  requestId?: () => string;
  /** Replace a real dependency (tests, local runs). */
  objects?: ObjectStore;
  keys?: KeyStore;
  quota?: QuotaMeter;
}

/** Stands in for dependencies that cannot be built; the core answers 503 before ever calling it. */
const unconfigured = {
  get(): never {
    throw new ConfigurationError('not configured');
  },
  lookup(): never {
    throw new ConfigurationError('not configured');
  },
  meter(): never {
    throw new ConfigurationError('not configured');
  },
};

/**
 * Key lookups as a container makes them: `inner` behind the cache the configuration sizes (KEY_CACHE_*).
 * @example cachedKeys(new DynamoKeyStore({ client, table }), config)
 */
export function cachedKeys(inner: KeyStore, c: ProxyConfig): KeyStore {
  return new CachedKeyStore(inner, {
    ttlMs: c.keyCacheTtlMs,
    maxEntries: c.keyCacheMaxEntries,
    negativeTtlMs: c.keyNegativeCacheTtlMs,
    negativeMaxEntries: c.keyNegativeCacheMaxEntries,
  });
}

/**
 * The proxy for a configuration. An incomplete configuration still yields a handler: it answers
 * `503 configuration_error` (after 405 and the Authorization header checks) and the problems are logged once.
 * @example const handle = createProxy(loadConfig());
 */
export function createProxy(config: ConfigOutcome, overrides: ProxyOverrides = {}): ProxyHandler {
  const log = overrides.log ?? logJson;
  const dependencies: ProxyDependencies = {
    objects: overrides.objects ?? unconfigured,
    keys: overrides.keys ?? unconfigured,
    quota: overrides.quota ?? unconfigured,
    config,
    now: overrides.now ?? (() => new Date()),
    requestId: overrides.requestId ?? newRequestId,
    log,
  };
  if (!config.ok) {
    logJson({
      time: new Date().toISOString(),
      level: 'error',
      message: 'configuration incomplete',
      problems: config.problems,
    });
    return createHandler(dependencies);
  }
  const { config: c } = config;
  // One cache per container, for every immutable derived value (coded answers now; shards and ranges too).
  dependencies.byteCache = new ByteCache({ maxBytes: c.byteCacheBytes });
  // The two calls of every request (object read, metering write) may go lean; key lookups are cached and
  // stay on the SDK, as does everything outside the request path.
  const lean = (c.hotPathClient ?? DEFAULT_HOT_PATH_CLIENT) === 'lean';
  const region = regionOf();
  if (!overrides.objects) {
    dependencies.objects = lean
      ? new LeanS3ObjectStore({
          bucket: c.bucket,
          endpoint: c.s3Endpoint,
          region,
          credentials: credentialProvider(c.s3Endpoint),
        })
      : new S3ObjectStore({ client: s3Client({ endpoint: c.s3Endpoint }), bucket: c.bucket });
  }
  if (!overrides.keys || !overrides.quota) {
    const dynamo = dynamoClient({ endpoint: c.dynamodbEndpoint });
    dependencies.keys =
      overrides.keys ?? cachedKeys(new DynamoKeyStore({ client: dynamo, table: c.keysTable }), c);
    dependencies.quota =
      overrides.quota ??
      new DynamoQuotaMeter({
        transport: lean
          ? new LeanCounterTransport({
              endpoint: c.dynamodbEndpoint,
              region,
              credentials: credentialProvider(c.dynamodbEndpoint),
            })
          : new SdkCounterTransport(dynamo),
        table: c.countersTable,
      });
  }
  if (c.cursorSecretArn !== undefined && c.cursorSecret === '') {
    // Deployed: the secret is read at cold start (and again when it is CURSOR_SECRET_MAX_AGE_MS old), never
    // kept in the function's configuration. The dependencies above are shared by every handler built here.
    const arn = c.cursorSecretArn;
    return createSecretProxy({
      fetchSecret: overrides.fetchCursorSecret ?? secretReader(arn, { timeoutMs: c.dependencyTimeoutMs }),
      build: (cursorSecret) =>
        createHandler({ ...dependencies, config: { ok: true, config: { ...c, cursorSecret } } }),
      unavailable: (problem) =>
        createHandler({ ...dependencies, config: { ok: false, problems: [problem] } }),
      maxAgeMs: c.cursorSecretMaxAgeMs ?? 300_000,
      now: () => dependencies.now().getTime(),
      log: logJson,
    });
  }
  return createHandler(dependencies);
}
