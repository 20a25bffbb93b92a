/**
 * Wiring: the proxy core with its real dependencies, built from the configuration. The request path has one
 * client, everywhere: lean signed requests (aws/signed.ts) for the S3 read, key lookups, metering and the cursor
 * secret. Only the credentials differ: the Lambda function signs with those Lambda puts in its environment
 * (proxy/lambda-entry.ts), `createProxy` (app.ts: `npm start`, tests, benchmarks) with the SDK's credential chain.
 * An incomplete or unusable configuration still yields a handler: it answers `503 configuration_error` (after
 * 405 and the Authorization header checks) and the problems are logged once — never a crash at import.
 */
import { randomBytes } from 'node:crypto';
import type { CredentialSource } from '../aws/signed.js';
import { POINTER_KEY } from '../store/layout.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../store/objects/interface.js';
import { LeanS3ObjectStore } from '../store/objects/s3-lean.js';
import { hashApiKey } from '../tables/keys.js';
import { ByteCache } from './cache/bytes.js';
import type { ConfigOutcome, ProxyConfig } from './config.js';
import { callWithDeadline } from './core/deadline.js';
import { createHandler } from './core/handler.js';
import type { ProxyDependencies, ProxyHandler, ProxyRequest, RequestLogLine } from './core/types.js';
import { createSecretProxy, secretReader } from './cursor-secret.js';
import { ConfigurationError } from './errors.js';
import { CachedKeyStore } from './keys/cached.js';
import { DynamoKeyStore } from './keys/dynamo.js';
import type { KeyStore } from './keys/interface.js';
import { newRequestId } from './log/request-id.js';
import { logJson } from './log/sink.js';
import { DynamoQuotaMeter } from './quota/dynamo.js';
import { LeanCounterTransport } from './quota/dynamo-lean.js';
import type { QuotaMeter } from './quota/interface.js';
import { parseAuthorization } from './request/auth.js';
import { requestParser } from './request/plan.js';

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

/** What signs the request path's calls to `endpoint` (undefined: AWS's own). */
export type RequestPathCredentials = (endpoint: string | undefined) => CredentialSource;

function regionOf(config: ProxyConfig): string {
  return config.region ?? 'us-east-1';
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
 * The object store with one read started ahead: the pointer, read while a cold container waits for its
 * cursor secret, is handed to the catalogue's first pointer read (when it asks within `freshForMs`).
 */
class EarlyPointerStore implements ObjectStore {
  #early: { reading: Promise<GetOutcome>; startedAt: number } | undefined;
  #started = false;

  constructor(
    private readonly inner: ObjectStore,
    private readonly pointerKey: string,
    private readonly timeoutMs: number,
    private readonly freshForMs: number,
  ) {}

  /** Start the pointer read, once per container. */
  prefetchPointer(): void {
    if (this.#started) return;
    this.#started = true;
    const reading = callWithDeadline('objects', this.timeoutMs, (signal) =>
      this.inner.get(this.pointerKey, { signal }),
    );
    // Nobody may ask for it (the secret could not be read): its failure must not go unhandled.
    reading.catch(() => {});
    this.#early = { reading, startedAt: performance.now() };
  }

  get(key: string, options: GetOptions = {}): Promise<GetOutcome> {
    const early = this.#early;
    if (early && key === this.pointerKey && !options.range && options.ifNoneMatch === undefined) {
      this.#early = undefined;
      if (performance.now() - early.startedAt < this.freshForMs) return early.reading;
    }
    return this.inner.get(key, options);
  }
}

/**
 * The proxy for a configuration, its calls signed with `credentials`, for what `overrides` does not replace.
 * @example const handle = wireProxy(loadConfig(), () => () => environmentCredentials()!);
 */
export function wireProxy(
  config: ConfigOutcome,
  credentials: RequestPathCredentials,
  overrides: ProxyOverrides = {},
): ProxyHandler {
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
  const incomplete = (problems: string[]) => {
    logJson({
      time: new Date().toISOString(),
      level: 'error',
      message: 'configuration incomplete',
      problems,
    });
    return createHandler({ ...dependencies, config: { ok: false, problems } });
  };
  if (!config.ok) return incomplete(config.problems);
  const c = config.config;
  let objects: EarlyPointerStore;
  let readSecret: (() => Promise<string>) | undefined;
  try {
    objects = new EarlyPointerStore(
      overrides.objects ??
        new LeanS3ObjectStore({
          bucket: c.bucket,
          endpoint: c.s3Endpoint,
          region: regionOf(c),
          credentials: credentials(c.s3Endpoint),
        }),
      `${c.prefix}${POINTER_KEY}`,
      c.dependencyTimeoutMs,
      Math.max(c.pointerTtlMs, 1),
    );
    if (!overrides.keys || !overrides.quota) {
      // One connection pool for key lookups and metering alike.
      const dynamo = new LeanCounterTransport({
        endpoint: c.dynamodbEndpoint,
        region: regionOf(c),
        credentials: credentials(c.dynamodbEndpoint),
      });
      dependencies.keys =
        overrides.keys ?? cachedKeys(new DynamoKeyStore({ transport: dynamo, table: c.keysTable }), c);
      dependencies.quota =
        overrides.quota ??
        new DynamoQuotaMeter({
          transport: dynamo,
          table: c.countersTable,
          // A write unanswered by then is looked for within the handler's longer metering deadline.
          writeTimeoutMs: c.dependencyTimeoutMs,
        });
    }
    if (c.cursorSecretArn !== undefined && c.cursorSecret === '')
      readSecret =
        overrides.fetchCursorSecret ??
        secretReader(c.cursorSecretArn, {
          timeoutMs: c.dependencyTimeoutMs,
          endpoint: c.secretsManagerEndpoint,
          credentials: credentials(c.secretsManagerEndpoint),
        });
  } catch (error) {
    // A value the checks of loadConfig let through but a client cannot use: answered, not thrown.
    return incomplete([`a client could not be built: ${(error as Error)?.message ?? String(error)}`]);
  }
  dependencies.objects = objects;
  // One byte cache per handler: a new cursor secret changes the first pages' cursors, so the answers composed
  // with the old one must not be served (the old handler and its cache are dropped together).
  const handlerFor = (cursorSecret: string) =>
    createHandler({
      ...dependencies,
      config: { ok: true, config: { ...c, cursorSecret } },
      byteCache: new ByteCache({ maxBytes: c.byteCacheBytes }),
    });
  if (!readSecret) return handlerFor(c.cursorSecret);

  // Deployed: the secret is read from Secrets Manager by the first request (and again when it is
  // CURSOR_SECRET_MAX_AGE_MS old), never kept in the function's configuration.
  const parse = requestParser();
  const keys = dependencies.keys;
  return createSecretProxy({
    fetchSecret: readSecret,
    build: handlerFor,
    unavailable: (problem) => createHandler({ ...dependencies, config: { ok: false, problems: [problem] } }),
    needsSecret: (request) => needsCursorSecret(parse, request),
    // Answers no cursor depends on, while no secret is held: under a secret nobody knows, which they never use.
    withoutSecret: () => handlerFor(randomBytes(32).toString('base64url')),
    prefetch: (request) => {
      objects.prefetchPointer();
      const authorization = parseAuthorization(request.headers.authorization);
      if (authorization.ok) {
        const lookup = callWithDeadline('keys', c.dependencyTimeoutMs, (signal) =>
          keys.lookup(hashApiKey(authorization.key), { signal }),
        );
        // The core asks again and joins this lookup (the key cache shares one read per key).
        lookup.catch(() => {});
      }
    },
    maxAgeMs: c.cursorSecretMaxAgeMs ?? 300_000,
    now: () => dependencies.now().getTime(),
    log: logJson,
  });
}

/**
 * Whether the answer to `request` makes or checks a cursor: a list page (its next_cursor, or the cursor it
 * follows) and an OPTIONS that carries a cursor. Everything answered before the catalogue is read (405, 401,
 * 404 for an unknown route, 400) and details do not.
 */
function needsCursorSecret(parse: ReturnType<typeof requestParser>, request: ProxyRequest): boolean {
  const parsed = parse(request.method, request.path, request.query);
  if (!parsed.ok || !parseAuthorization(request.headers.authorization).ok) return false;
  const { plan } = parsed;
  return plan.kind === 'list' && (parsed.method !== 'OPTIONS' || plan.cursor !== undefined);
}
