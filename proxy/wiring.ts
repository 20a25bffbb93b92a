/**
 * Wiring: the proxy core with its real dependencies, built from the configuration. The request path has one
 * client, everywhere: lean signed requests (aws/signed.ts) for the S3 read, key lookups, metering and the cursor
 * secret. Only the credentials differ: the Lambda function signs with those Lambda puts in its environment
 * (proxy/lambda-entry.ts), `createProxy` (app.ts: `npm start`, tests, benchmarks) with the SDK's credential chain.
 * An incomplete or unusable configuration still yields a handler: it answers `503 configuration_error` (after
 * 405 and the Authorization header checks) and the problems are logged once — never a crash at import.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_REGION } from '../aws/env.js';
import type { CredentialSource } from '../aws/signed.js';
import { errorMessage } from '../store/errors.js';
import { POINTER_KEY } from '../store/layout.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../store/objects/interface.js';
import { LeanS3ObjectStore } from '../store/objects/s3-lean.js';
import { newRequestId } from '../store/request-id.js';
import { hashApiKey } from '../tables/keys.js';
import { ByteCache } from './cache/bytes.js';
import { type ConfigOutcome, CURSOR_SECRET_MAX_AGE_MS, type ProxyConfig } from './config.js';
import { callWithDeadline } from './core/deadline.js';
import { createHandler } from './core/handler.js';
import type { ProxyDependencies, ProxyHandler, ProxyLogLine, ProxyRequest } from './core/types.js';
import { createSecretProxy, secretReader } from './cursor-secret.js';
import { ConfigurationError } from './errors.js';
import { CachedKeyStore } from './keys/cached.js';
import { DynamoKeyStore } from './keys/dynamo.js';
import type { KeyStore } from './keys/interface.js';
import { logJson } from './log/sink.js';
import { DynamoQuotaMeter } from './quota/dynamo.js';
import { LeanCounterTransport } from './quota/dynamo-lean.js';
import type { QuotaMeter } from './quota/interface.js';
import { parseAuthorization } from './request/auth.js';
import { requestParser } from './request/plan.js';

export interface ProxyOverrides {
  /**
   * Where every line of the proxy goes: one per request, and its problems (a configuration it cannot use, a
   * cursor secret not read). Declared as a method so that a logger of request lines only may be passed.
   * @default logJson
   */
  log?(line: ProxyLogLine): void;
  /** Reads the cursor secret when the configuration names it by ARN (tests); Secrets Manager otherwise. */
  fetchCursorSecret?: () => Promise<string>;
  /** The clock of the request path: requests, the key cache, the cursor secret's age, the lines' times. */
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
  return config.region ?? DEFAULT_REGION;
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
  refund(): never {
    throw new ConfigurationError('not configured');
  },
};

/**
 * Key lookups as a container makes them: `inner` behind the cache the configuration sizes (KEY_CACHE_*).
 * @example cachedKeys(new DynamoKeyStore({ client, table }), config)
 */
export function cachedKeys(inner: KeyStore, c: ProxyConfig, now?: () => number): KeyStore {
  return new CachedKeyStore(inner, {
    ...(now && { now }),
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

/** The request path's clients, built from a complete configuration where `overrides` does not replace them. */
interface Clients {
  objects: EarlyPointerStore;
  keys: KeyStore;
  quota: QuotaMeter;
  /** Reads the cursor secret, when it is to be read (named by ARN) rather than configured. */
  readSecret: (() => Promise<string>) | undefined;
}

/** The core's dependencies, with a log that takes every line of the proxy's (the secret reader's too). */
type Wired = ProxyDependencies & { log: (line: ProxyLogLine) => void };

/**
 * The proxy for a configuration, its calls signed with `credentials`, for what `overrides` does not replace.
 * Every line it writes goes to `overrides.log` and every time it reads comes from `overrides.now`.
 * @example const handle = wireProxy(loadConfig(), () => () => environmentCredentials()!);
 */
export function wireProxy(
  loaded: ConfigOutcome,
  credentials: RequestPathCredentials,
  overrides: ProxyOverrides = {},
): ProxyHandler {
  const log = (line: ProxyLogLine) => (overrides.log ? overrides.log(line) : logJson(line));
  const dependencies: Wired = {
    objects: overrides.objects ?? unconfigured,
    keys: overrides.keys ?? unconfigured,
    quota: overrides.quota ?? unconfigured,
    config: loaded,
    now: overrides.now ?? (() => new Date()),
    requestId: overrides.requestId ?? newRequestId,
    log,
  };
  const incomplete = (problems: string[]) => {
    const time = dependencies.now().toISOString();
    log({ time, level: 'error', message: 'configuration incomplete', problems });
    return createHandler({ ...dependencies, config: { ok: false, problems } });
  };
  if (!loaded.ok) return incomplete(loaded.problems);
  const config = loaded.config;
  let clients: Clients;
  try {
    clients = buildClients(config, credentials, overrides, dependencies.now);
  } catch (error) {
    // A value the checks of loadConfig let through but a client cannot use: answered, not thrown.
    return incomplete([`a client could not be built: ${errorMessage(error)}`]);
  }
  const wired = { ...dependencies, objects: clients.objects, keys: clients.keys, quota: clients.quota };
  if (!clients.readSecret) return handlerFor(wired, config, config.cursorSecret);
  return secretProxy(wired, config, { ...clients, readSecret: clients.readSecret });
}

/**
 * The core for a configuration and its cursor secret. One byte cache per handler: a new cursor secret changes
 * the first pages' cursors, so the answers composed with the old one must not be served (the old handler and
 * its cache are dropped together).
 */
function handlerFor(wired: ProxyDependencies, config: ProxyConfig, cursorSecret: string): ProxyHandler {
  return createHandler({
    ...wired,
    config: { ok: true, config: { ...config, cursorSecret } },
    byteCache: new ByteCache({ maxBytes: config.byteCacheBytes }),
  });
}

/** The object store, key lookups, meter and secret reader of a complete configuration; throws when unusable. */
function buildClients(
  config: ProxyConfig,
  credentials: RequestPathCredentials,
  overrides: ProxyOverrides,
  now: () => Date,
): Clients {
  const region = regionOf(config);
  const store =
    overrides.objects ??
    new LeanS3ObjectStore({
      bucket: config.bucket,
      endpoint: config.s3Endpoint,
      region,
      credentials: credentials(config.s3Endpoint),
    });
  const pointerKey = `${config.prefix}${POINTER_KEY}`;
  const freshForMs = Math.max(config.pointerTtlMs, 1);
  const objects = new EarlyPointerStore(store, pointerKey, config.dependencyTimeoutMs, freshForMs);
  let keys = overrides.keys ?? unconfigured;
  let quota = overrides.quota ?? unconfigured;
  if (!overrides.keys || !overrides.quota) {
    // One connection pool for key lookups and metering alike.
    const transport = new LeanCounterTransport({
      endpoint: config.dynamodbEndpoint,
      region,
      credentials: credentials(config.dynamodbEndpoint),
    });
    const lookups = new DynamoKeyStore({ transport, table: config.keysTable });
    keys = overrides.keys ?? cachedKeys(lookups, config, () => now().getTime());
    // A write unanswered by then is looked for within the handler's longer metering deadline.
    const writeTimeoutMs = config.dependencyTimeoutMs;
    quota =
      overrides.quota ?? new DynamoQuotaMeter({ transport, table: config.countersTable, writeTimeoutMs });
  }
  return { objects, keys, quota, readSecret: secretReaderOf(config, credentials, overrides) };
}

/** How the cursor secret is read when the configuration names it by ARN instead of holding it. */
function secretReaderOf(
  config: ProxyConfig,
  credentials: RequestPathCredentials,
  overrides: ProxyOverrides,
): (() => Promise<string>) | undefined {
  if (config.cursorSecretArn === undefined || config.cursorSecret !== '') return undefined;
  return (
    overrides.fetchCursorSecret ??
    secretReader(config.cursorSecretArn, {
      timeoutMs: config.dependencyTimeoutMs,
      endpoint: config.secretsManagerEndpoint,
      credentials: credentials(config.secretsManagerEndpoint),
    })
  );
}

/**
 * Deployed: the secret is read from Secrets Manager by the first request (and again when it is
 * CURSOR_SECRET_MAX_AGE_MS old), never kept in the function's configuration.
 */
function secretProxy(
  wired: Wired,
  config: ProxyConfig,
  clients: Clients & { readSecret: () => Promise<string> },
): ProxyHandler {
  const parse = requestParser();
  return createSecretProxy({
    fetchSecret: clients.readSecret,
    build: (secret) => handlerFor(wired, config, secret),
    unavailable: (problem) => createHandler({ ...wired, config: { ok: false, problems: [problem] } }),
    needsSecret: (request) => needsCursorSecret(parse, request),
    // Answers no cursor depends on, while no secret is held: under a secret nobody knows, which they never use.
    withoutSecret: () => handlerFor(wired, config, randomBytes(32).toString('base64url')),
    prefetch: (request) => prefetch(request, clients, config.dependencyTimeoutMs),
    maxAgeMs: config.cursorSecretMaxAgeMs ?? CURSOR_SECRET_MAX_AGE_MS,
    now: () => wired.now().getTime(),
    log: wired.log,
  });
}

/** While a cold container waits for its secret: the pointer read and the request's key lookup started. */
function prefetch(request: ProxyRequest, clients: Clients, timeoutMs: number): void {
  clients.objects.prefetchPointer();
  const authorization = parseAuthorization(request.headers.authorization);
  if (!authorization.ok) return;
  const lookup = callWithDeadline('keys', timeoutMs, (signal) =>
    clients.keys.lookup(hashApiKey(authorization.key), { signal }),
  );
  // The core asks again and joins this lookup (the key cache shares one read per key).
  lookup.catch(() => {});
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
