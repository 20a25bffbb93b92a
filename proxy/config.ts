/**
 * Proxy configuration, read once from the environment. A missing or malformed required variable is not a
 * crash: the proxy answers `503 configuration_error` naming nothing secret, and logs which variable it was.
 */
import { type AwsService, awsRegion, endpointSetting, type IntegerRule, integerSetting } from '../aws/env.js';
import { KEY_CACHE_DEFAULTS, KEY_CACHE_MAX_MS } from '../tables/keys.js';
import { defaultByteCacheBytes } from './cache/bytes.js';

export interface ProxyConfig {
  /** S3 bucket holding the published objects. */
  bucket: string;
  /** Key prefix of the published catalogue inside the bucket ('' or ending in '/'). */
  prefix: string;
  /**
   * S3-compatible endpoint (s3rver locally); AWS when undefined. From `S3_ENDPOINT`, `AWS_ENDPOINT_URL_S3` or
   * `AWS_ENDPOINT_URL` (aws/env.ts).
   */
  s3Endpoint: string | undefined;
  keysTable: string;
  countersTable: string;
  /**
   * DynamoDB-compatible endpoint (dynalite locally); AWS when undefined. From `DYNAMODB_ENDPOINT`,
   * `AWS_ENDPOINT_URL_DYNAMODB` or `AWS_ENDPOINT_URL`.
   */
  dynamodbEndpoint: string | undefined;
  /** Secrets Manager endpoint for the cursor secret: `AWS_ENDPOINT_URL_SECRETS_MANAGER` or `AWS_ENDPOINT_URL`. */
  secretsManagerEndpoint?: string | undefined;
  /** The region of every client (`AWS_REGION`, else us-east-1). */
  region?: string;
  /**
   * HMAC key that binds cursors to their query; at least 32 characters. `''` when it is to be read from
   * Secrets Manager (`cursorSecretArn`) at cold start, which the wiring in `app.ts` does.
   */
  cursorSecret: string;
  /** ARN of the Secrets Manager secret holding the cursor key (deployed); exclusive with `cursorSecret`. */
  cursorSecretArn?: string | undefined;
  /** How long a cursor key read from Secrets Manager is used before it is read again (rotation bound). */
  cursorSecretMaxAgeMs?: number;
  /** How long a key lookup is trusted: revocation takes effect within this bound. */
  keyCacheTtlMs: number;
  keyCacheMaxEntries: number;
  /** How long a refused key (unknown or revoked) is remembered; at most `keyCacheTtlMs`. */
  keyNegativeCacheTtlMs?: number;
  /** Refused keys are remembered apart from accepted ones, at most this many. */
  keyNegativeCacheMaxEntries?: number;
  /** How often the published version pointer is re-checked (a conditional read). */
  pointerTtlMs: number;
  /** Timeout of every single dependency call (S3 read, DynamoDB call). */
  dependencyTimeoutMs: number;
  /** Bound of the in-memory cache of immutable bytes (index shards, ranges, composed and coded answers); 0 disables it. */
  byteCacheBytes: number;
}

export type ConfigOutcome = { ok: true; config: ProxyConfig } | { ok: false; problems: string[] };

type Env = Record<string, string | undefined>;

const MB = 2 ** 20;

/** How long a cursor key read from Secrets Manager is used before it is read again, unless configured. */
export const CURSOR_SECRET_MAX_AGE_MS = 300_000;

/**
 * The characters S3 allows in a bucket name (lower-case letters, digits, dots and hyphens, beginning with a
 * letter or digit): a name with others could not even be put into a request's host or path. (S3's length
 * rules, 3 to 63, are left to S3: a name it refuses is answered 503 origin_unavailable.)
 */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{0,254}$/;
/** The characters DynamoDB allows in a table name (its length rules are left to DynamoDB, as above). */
const TABLE_NAME = /^[A-Za-z0-9_.-]{1,255}$/;
/** A region is a host name label (`eu-west-1`); anything else would end up in an endpoint's host. */
const REGION = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The environment as the proxy reads it: each reading that finds a variable missing or malformed adds a
 * problem naming it, so every problem is reported at once.
 */
class Settings {
  readonly problems: string[] = [];
  constructor(readonly env: Env) {}

  required(name: string): string {
    const value = this.optional(name);
    if (!value) this.problems.push(`${name} is not set`);
    return value ?? '';
  }

  optional(name: string): string | undefined {
    return this.env[name]?.trim() || undefined;
  }

  /** An integer by the one rule of every setting (aws/env.ts); its fallback when malformed. */
  integer(name: string, rule: IntegerRule): number {
    const read = integerSetting(this.env, name, rule);
    if (read.ok) return read.value;
    this.problems.push(read.problem);
    return rule.fallback;
  }

  endpoint(service: AwsService): string | undefined {
    const setting = endpointSetting(service, this.env);
    if (setting && !URL.canParse(setting.value)) this.problems.push(`${setting.name} is not a URL`);
    else if (setting && !/^https?:$/.test(new URL(setting.value).protocol))
      this.problems.push(`${setting.name} is not an http:// or https:// URL`);
    return setting?.value;
  }

  named(name: string, rule: RegExp, what: string): string {
    const value = this.required(name);
    if (value && !rule.test(value)) this.problems.push(`${name} is not a valid ${what}`);
    return value;
  }
}

/**
 * The cursor key: deployed, the ARN of the secret, read at cold start (no secret in the function's
 * configuration); local runs and tests, the value itself. Exactly one of the two.
 */
function cursorKey(
  settings: Settings,
): Pick<ProxyConfig, 'cursorSecret' | 'cursorSecretArn' | 'cursorSecretMaxAgeMs'> {
  const cursorSecretArn = settings.optional('CURSOR_SECRET_ARN');
  if (cursorSecretArn !== undefined && settings.optional('CURSOR_SECRET') !== undefined)
    settings.problems.push('set only one of CURSOR_SECRET and CURSOR_SECRET_ARN');
  if (cursorSecretArn !== undefined && !/^arn:aws[a-z-]*:secretsmanager:/.test(cursorSecretArn))
    settings.problems.push('CURSOR_SECRET_ARN is not a Secrets Manager ARN');
  const cursorSecret = cursorSecretArn === undefined ? settings.required('CURSOR_SECRET') : '';
  if (cursorSecret && cursorSecret.length < 32)
    settings.problems.push('CURSOR_SECRET must be at least 32 characters');
  return {
    cursorSecret,
    cursorSecretArn,
    cursorSecretMaxAgeMs: settings.integer('CURSOR_SECRET_MAX_AGE_MS', {
      fallback: CURSOR_SECRET_MAX_AGE_MS,
      min: 1_000,
      max: 86_400_000,
    }),
  };
}

/** Where the proxy reads from: the bucket and prefix, the two tables, their endpoints and region. */
function dependencies(
  settings: Settings,
): Pick<
  ProxyConfig,
  'bucket' | 'prefix' | 's3Endpoint' | 'keysTable' | 'countersTable' | 'dynamodbEndpoint' | 'region'
> {
  const prefix = settings.optional('CATALOGUE_PREFIX') ?? '';
  const region = awsRegion(settings.optional('AWS_REGION'), {});
  if (!REGION.test(region)) settings.problems.push('AWS_REGION is not a region name');
  return {
    bucket: settings.named('CATALOGUE_BUCKET', BUCKET_NAME, 'S3 bucket name'),
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    s3Endpoint: settings.endpoint('s3'),
    keysTable: settings.named('KEYS_TABLE', TABLE_NAME, 'DynamoDB table name'),
    countersTable: settings.named('COUNTERS_TABLE', TABLE_NAME, 'DynamoDB table name'),
    dynamodbEndpoint: settings.endpoint('dynamodb'),
    region,
  };
}

/** How long what the proxy read is trusted, how much it keeps, and how long it waits for a dependency. */
function bounds(
  settings: Settings,
): Pick<
  ProxyConfig,
  | 'keyCacheTtlMs'
  | 'keyCacheMaxEntries'
  | 'keyNegativeCacheTtlMs'
  | 'keyNegativeCacheMaxEntries'
  | 'pointerTtlMs'
  | 'dependencyTimeoutMs'
  | 'byteCacheBytes'
> {
  const ttl = { min: 0, max: KEY_CACHE_MAX_MS };
  return {
    keyCacheTtlMs: settings.integer('KEY_CACHE_TTL_MS', { fallback: KEY_CACHE_DEFAULTS.ttlMs, ...ttl }),
    keyCacheMaxEntries: settings.integer('KEY_CACHE_MAX_ENTRIES', {
      fallback: 10_000,
      min: 1,
      max: 10_000_000,
    }),
    keyNegativeCacheTtlMs: settings.integer('KEY_NEGATIVE_CACHE_TTL_MS', {
      fallback: KEY_CACHE_DEFAULTS.negativeTtlMs,
      ...ttl,
    }),
    keyNegativeCacheMaxEntries: settings.integer('KEY_NEGATIVE_CACHE_MAX_ENTRIES', {
      fallback: 1_000,
      min: 1,
      max: 1_000_000,
    }),
    pointerTtlMs: settings.integer('POINTER_TTL_MS', { fallback: 5_000, min: 0, max: 3_600_000 }),
    dependencyTimeoutMs: settings.integer('DEPENDENCY_TIMEOUT_MS', { fallback: 2_000, min: 1, max: 60_000 }),
    // MB; by default half the Lambda's memory, within what it leaves (64 MB outside Lambda).
    byteCacheBytes:
      settings.integer('BYTE_CACHE_MB', {
        fallback: defaultByteCacheBytes(settings.env) / MB,
        min: 0,
        max: 65_536,
      }) * MB,
  };
}

/**
 * @example loadConfig({ CATALOGUE_BUCKET: 'b', KEYS_TABLE: 'k', COUNTERS_TABLE: 'c', CURSOR_SECRET: 'x'.repeat(32) })
 */
export function loadConfig(env: Env = process.env): ConfigOutcome {
  const settings = new Settings(env);
  const cursor = cursorKey(settings);
  const config: ProxyConfig = {
    ...dependencies(settings),
    ...cursor,
    // Secrets Manager is called only to read the secret an ARN names.
    secretsManagerEndpoint:
      cursor.cursorSecretArn === undefined ? undefined : settings.endpoint('secretsmanager'),
    ...bounds(settings),
  };
  return settings.problems.length > 0 ? { ok: false, problems: settings.problems } : { ok: true, config };
}
