/**
 * Proxy configuration, read once from the environment. A missing or malformed required variable is not a
 * crash: the proxy answers `503 configuration_error` naming nothing secret, and logs which variable it was.
 */
import { type AwsService, awsRegion, endpointSetting } from '../aws/env.js';
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
 * @example loadConfig({ CATALOGUE_BUCKET: 'b', KEYS_TABLE: 'k', COUNTERS_TABLE: 'c', CURSOR_SECRET: 'x'.repeat(32) })
 */
export function loadConfig(env: Env = process.env): ConfigOutcome {
  const problems: string[] = [];
  const required = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) problems.push(`${name} is not set`);
    return value ?? '';
  };
  const optional = (name: string): string | undefined => env[name]?.trim() || undefined;
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^[0-9]+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}`);
      return fallback;
    }
    return value;
  };
  const endpoint = (service: AwsService): string | undefined => {
    const setting = endpointSetting(service, env);
    if (setting && !URL.canParse(setting.value)) problems.push(`${setting.name} is not a URL`);
    else if (setting && !/^https?:$/.test(new URL(setting.value).protocol))
      problems.push(`${setting.name} is not an http:// or https:// URL`);
    return setting?.value;
  };
  const named = (name: string, rule: RegExp, what: string): string => {
    const value = required(name);
    if (value && !rule.test(value)) problems.push(`${name} is not a valid ${what}`);
    return value;
  };

  const prefix = optional('CATALOGUE_PREFIX') ?? '';
  // Deployed: the ARN of the secret, read at cold start (no secret in the function's configuration).
  // Local runs and tests: the value itself.
  const cursorSecretArn = optional('CURSOR_SECRET_ARN');
  if (cursorSecretArn !== undefined && optional('CURSOR_SECRET') !== undefined)
    problems.push('set only one of CURSOR_SECRET and CURSOR_SECRET_ARN');
  if (cursorSecretArn !== undefined && !/^arn:aws[a-z-]*:secretsmanager:/.test(cursorSecretArn))
    problems.push('CURSOR_SECRET_ARN is not a Secrets Manager ARN');
  const cursorSecret = cursorSecretArn === undefined ? required('CURSOR_SECRET') : '';
  if (cursorSecret && cursorSecret.length < 32) problems.push('CURSOR_SECRET must be at least 32 characters');
  const region = awsRegion(optional('AWS_REGION'), {});
  if (!REGION.test(region)) problems.push('AWS_REGION is not a region name');
  const config: ProxyConfig = {
    bucket: named('CATALOGUE_BUCKET', BUCKET_NAME, 'S3 bucket name'),
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    s3Endpoint: endpoint('s3'),
    keysTable: named('KEYS_TABLE', TABLE_NAME, 'DynamoDB table name'),
    countersTable: named('COUNTERS_TABLE', TABLE_NAME, 'DynamoDB table name'),
    dynamodbEndpoint: endpoint('dynamodb'),
    secretsManagerEndpoint: cursorSecretArn === undefined ? undefined : endpoint('secretsmanager'),
    region,
    cursorSecret,
    cursorSecretArn,
    cursorSecretMaxAgeMs: integer('CURSOR_SECRET_MAX_AGE_MS', CURSOR_SECRET_MAX_AGE_MS, 1_000, 86_400_000),
    keyCacheTtlMs: integer('KEY_CACHE_TTL_MS', KEY_CACHE_DEFAULTS.ttlMs, 0, KEY_CACHE_MAX_MS),
    keyCacheMaxEntries: integer('KEY_CACHE_MAX_ENTRIES', 10_000, 1, 10_000_000),
    keyNegativeCacheTtlMs: integer(
      'KEY_NEGATIVE_CACHE_TTL_MS',
      KEY_CACHE_DEFAULTS.negativeTtlMs,
      0,
      KEY_CACHE_MAX_MS,
    ),
    keyNegativeCacheMaxEntries: integer('KEY_NEGATIVE_CACHE_MAX_ENTRIES', 1_000, 1, 1_000_000),
    pointerTtlMs: integer('POINTER_TTL_MS', 5_000, 0, 3_600_000),
    dependencyTimeoutMs: integer('DEPENDENCY_TIMEOUT_MS', 2_000, 1, 60_000),
    // MB; by default half the Lambda's memory, within what it leaves (64 MB outside Lambda).
    byteCacheBytes: integer('BYTE_CACHE_MB', defaultByteCacheBytes(env) / MB, 0, 65_536) * MB,
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
}
