/**
 * The stack's settings: every one optional, each with its default here and in its doc comment, and one
 * validation that names every bad setting, one line each, before any resource is created.
 */
import { RemovalPolicy, type StackProps, Token } from 'aws-cdk-lib';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { closestMatch } from 'leven';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';
import { KEY_CACHE_DEFAULTS, KEY_CACHE_MAX_MS } from '../tables/schema.js';

export interface CatalogueStackProps extends StackProps {
  /**
   * Key prefix of the published catalogue inside the bucket: `''` or a path ending in `/`
   * (no leading `/`, no wildcards). The proxy reads and the publisher writes only under it.
   * @default 'catalogue/'
   */
  readonly cataloguePrefix?: string;
  /**
   * Custom domain name of the API (e.g. `api.example.com`); needs `certificateArn`. You then point a
   * CNAME (or a Route 53 alias) at the `DistributionDomainName` output.
   * @default - none: the API is served on the distribution's `*.cloudfront.net` name
   */
  readonly domainName?: string;
  /**
   * ARN of an ACM certificate in us-east-1 that covers `domainName`; needs `domainName`.
   * @default - none
   */
  readonly certificateArn?: string;
  /**
   * ARN of a web ACL (AWS WAF, scope CLOUDFRONT) to attach to the distribution. Exclusive with
   * `wafRateLimitPer5Min`.
   * @default - none: every request is authenticated and metered per key by the proxy
   */
  readonly webAclArn?: string;
  /**
   * Create a web ACL (AWS WAF, scope CLOUDFRONT) with one rate-based rule: a client IP that sends more than
   * this many requests in 5 minutes is blocked until its rate falls below it again. CloudFront web ACLs
   * exist only in us-east-1, so the stack must be deployed there (deployment elsewhere stops with a
   * message); in another region create the web ACL in us-east-1 and pass `webAclArn`. Costs $5 per month
   * for the web ACL, $1 per month for the rule and $0.60 per million requests.
   * @default - none: no web ACL is created
   */
  readonly wafRateLimitPer5Min?: number;
  /**
   * CloudFront price class (which edge locations serve the API).
   * @default PriceClass.PRICE_CLASS_100 (North America and Europe)
   */
  readonly priceClass?: PriceClass;
  /**
   * E-mail address subscribed to an SNS topic that receives every alarm and its recovery.
   * @default - none: alarms are created without actions
   */
  readonly alarmEmail?: string;
  /**
   * ARN of the IAM principal (role or user) allowed to assume the publisher role.
   * @default - any principal of this account whose own IAM policy allows sts:AssumeRole on it
   */
  readonly publisherPrincipalArn?: string;
  /**
   * DynamoDB deletion protection on both tables.
   * @default true
   */
  readonly deletionProtection?: boolean;
  /**
   * What CloudFormation does with the bucket, the access-log bucket, the tables and the proxy's log group
   * when they leave the stack. `DESTROY` still fails on a non-empty bucket (nothing is emptied for you).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Memory of the proxy Lambda in MB (CPU scales with it; the byte cache takes half of it by default). 512 MB
   * is the cheapest per million requests measured from 128 to 1,024 MB under a realistic spread of requests
   * (bench/README.md, "The byte cache under a realistic spread"): 128 MB has no room for a cache and reads
   * S3 on every request; above 512 MB the cache answers hardly more requests than 512 MB's 256 MB while every
   * billed millisecond costs more.
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * Timeout of the proxy Lambda in seconds; must exceed four dependency timeouts (key lookup, metering,
   * pointer and object read can each take one).
   * @default 10
   */
  readonly timeoutSeconds?: number;
  /**
   * Reserved concurrency of the proxy Lambda: caps its share of the account's concurrency and the load it
   * can put on DynamoDB, so a flood of random keys cannot starve the account's other functions. Recommended
   * in production: about 2 × peak requests per second × average duration in seconds (docs/operating.md, "Floods").
   * @default - none: unreserved account concurrency
   */
  readonly reservedConcurrency?: number;
  /**
   * Retention of the proxy's log group, in days (a value CloudWatch Logs accepts: 1, 3, 5, 7, 14, 30, …).
   * @default 30
   */
  readonly logRetentionDays?: number;
  /**
   * Retention of the CloudFront and S3 access logs, in days.
   * @default 90
   */
  readonly accessLogRetentionDays?: number;
  /**
   * AWS X-Ray active tracing on the proxy Lambda.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * `KEY_CACHE_TTL_MS` of the proxy: how long a key lookup is trusted. A revoked key keeps working for at
   * most this long on a warm Lambda instance.
   * @default 30000
   */
  readonly keyCacheTtlMs?: number;
  /**
   * `POINTER_TTL_MS` of the proxy: how often it re-checks the published version pointer. A publish is
   * visible to every Lambda instance at most this long after the pointer is written.
   * @default 5000
   */
  readonly pointerTtlMs?: number;
  /**
   * `DEPENDENCY_TIMEOUT_MS` of the proxy: the timeout of each S3 or DynamoDB call.
   * @default 2000
   */
  readonly dependencyTimeoutMs?: number;
  /**
   * The key-administration API's cap: usable (active, unexpired) keys an owner may hold at once
   * (`ADMIN_MAX_KEYS_PER_OWNER`); a roll may hold one more until the old key expires.
   * @default 10
   */
  readonly adminMaxKeysPerOwner?: number;
  /**
   * Alarm threshold: percentage of the function URL's requests answered with a 5xx, per 5 minutes.
   * @default 5
   */
  readonly errorRateThresholdPercent?: number;
  /**
   * Alarm threshold: p99 duration of the proxy Lambda in milliseconds, per 5 minutes.
   * @default 2000
   */
  readonly p99DurationThresholdMs?: number;
  /**
   * Alarm threshold: 401 answers of the proxy per minute (averaged over 5 minutes), i.e. well-formed keys
   * that are unknown or revoked; each costs a Lambda invocation and, past the key cache, a DynamoDB read.
   * @default 600
   */
  readonly unauthorizedPerMinuteThreshold?: number;
  /**
   * How a deploy moves the proxy's traffic to its new version (CodeDeploy's predefined configurations without
   * their `CodeDeployDefault.Lambda` prefix): a canary sends 10 % of requests to the new version for the
   * minutes named, then all; linear adds 10 % at each interval; `AllAtOnce` switches at once. Until the traffic
   * has moved, the new version's 5xx rate and p99 duration are watched, and either alarm moves every request
   * back to the previous version (docs/operating.md, "Safe deploys").
   * @default 'Canary10Percent5Minutes'
   */
  readonly proxyDeployment?: ProxyDeployment;
  /**
   * Memory of the upload builder Lambda in MB (CPU scales with it: a vCPU per 1,769 MB). A full build of
   * 100,000 modules peaks at ~1.5 GB (bench/README.md, section 11).
   * @default 3008
   */
  readonly uploadBuilderMemorySize?: number;
  /**
   * Timeout of the upload builder Lambda in seconds (Lambda's maximum is 900).
   * @default 900
   */
  readonly uploadBuilderTimeoutSeconds?: number;

  // Cost at volume (docs/operating.md, "Cost at volume"): what a request pays besides its edge and function.
  /**
   * Capacity mode of the counters table, which takes one metering write per request: `on-demand` pays per write
   * ($0.625 per million) and takes any burst; `provisioned` pays per hour for capacity that auto scaling keeps at
   * 70 % of the writes, between `countersMinWriteCapacity` and `countersMaxWriteCapacity` (about $0.26 per
   * million writes at a steady load, 0.4× on demand). A burst beyond the capacity and DynamoDB's burst credit
   * (up to 300 s of unused capacity) is throttled, and the proxy answers it `503 quota_unavailable`, until auto
   * scaling has caught up (a few minutes). Switching modes is an update in place (DynamoDB allows a few switches a day).
   * @default 'on-demand'
   */
  readonly countersCapacity?: CountersCapacity;
  /**
   * With `countersCapacity: 'provisioned'`: the write capacity units the counters table never goes below (the
   * writes a second it takes at once after a quiet spell). 25 WCU are free in an account whose other
   * provisioned tables in the region use none; each further WCU costs $0.47 a month.
   * @default 25
   */
  readonly countersMinWriteCapacity?: number;
  /**
   * With `countersCapacity: 'provisioned'`: the write capacity units auto scaling may reach (writes a second at
   * 70 % utilisation: 4,000 WCU take about 2,800 requests a second, 7 B a month), a cap on the table's price
   * ($1,898 a month) and on what a flood can cost.
   * @default 4000
   */
  readonly countersMaxWriteCapacity?: number;
  /**
   * Lambda's system log level for the proxy: `WARN` drops the START, END and REPORT lines Lambda writes for every
   * invocation (264 bytes a request, more than the proxy's own line); `INFO` and `DEBUG` keep them (as JSON).
   * Setting it switches the function's log format to JSON, which log-level filtering needs; the proxy's own
   * lines are JSON already and pass unchanged (their level is INFO or above). Without the REPORT lines, durations,
   * memory and cold starts are in Lambda's metrics only, not in the log group.
   * @default - none: Lambda's default, INFO in plain text
   */
  readonly proxySystemLogLevel?: ProxySystemLogLevel;

  // Told when it breaks (docs/operating.md, "7. The alarms and what to do").
  /**
   * Where the guide's runbook is read: every alarm's description ends with `Runbook: <this>#<alarm>`, the
   * section of that alarm. Point it at your hosted copy of docs/operating.md (a repository's web view).
   * @default 'docs/operating.md'
   */
  readonly runbookUrl?: string;
  /**
   * Minutes between two runs of the scheduled smoke check through the public URL (1–60); its alarm fires when
   * two of three runs fail or do not report.
   * @default 1
   */
  readonly scheduledCheckMinutes?: number;
  /**
   * Raise it by one to rotate the scheduled check's key: the next deploy makes a new key, puts it in the check
   * key's secret and revokes the previous one.
   * @default 1
   */
  readonly checkKeyGeneration?: number;
  /**
   * The CloudFront 4xx-rate alarm (us-east-1): percentage of the distribution's requests answered 4xx, per
   * 5 minutes, that raises it (with at least 100 requests in the 5 minutes).
   * @default 50
   */
  readonly edge4xxRateThresholdPercent?: number;
  /**
   * A deploy's 4xx alarm: by how many percentage points the new proxy version's share of 4xx answers (429
   * included) may exceed the live version's before the deploy is rolled back.
   * @default 20
   */
  readonly newVersion4xxIncreasePercent?: number;
  /**
   * Minutes a deploy keeps watching the new proxy version once it takes every request (the post-traffic
   * hook's bake: the deploy alarms and the smoke check); 0 runs the smoke check once and ends (0–14).
   * @default 5
   */
  readonly deployBakeMinutes?: number;

  // Data protection (docs/operating.md, "Data protection and restore").
  /**
   * Days a noncurrent version of a catalogue-bucket object is kept (the bucket is versioned: an overwritten
   * pointer or report, a collected object, can be restored within that time).
   * @default 30
   */
  readonly noncurrentVersionDays?: number;
  /**
   * Use this existing keys table (a point-in-time restore's) instead of the stack's own: every reader and
   * writer (proxy, admin API, the scheduled check's key) and every grant and alarm switches to it; the stack's
   * own table is kept (retained), no longer used.
   * @default - none: the stack's own keys table
   */
  readonly keysTableName?: string;
  /**
   * Retention of the admin API's audit log, in days (a value CloudWatch Logs accepts).
   * @default 365
   */
  readonly adminLogRetentionDays?: number;
}

/** The traffic shifts a proxy deploy may use: CodeDeploy's predefined Lambda configurations. */
export const PROXY_DEPLOYMENTS = [
  'Canary10Percent5Minutes',
  'Canary10Percent10Minutes',
  'Canary10Percent15Minutes',
  'Canary10Percent30Minutes',
  'Linear10PercentEvery1Minute',
  'Linear10PercentEvery2Minutes',
  'Linear10PercentEvery3Minutes',
  'Linear10PercentEvery10Minutes',
  'AllAtOnce',
] as const;
export type ProxyDeployment = (typeof PROXY_DEPLOYMENTS)[number];
/** The counters table's capacity modes (`countersCapacity`). */
export const COUNTERS_CAPACITIES = ['on-demand', 'provisioned'] as const;
export type CountersCapacity = (typeof COUNTERS_CAPACITIES)[number];
/** Lambda's system log levels (`proxySystemLogLevel`). */
export const SYSTEM_LOG_LEVELS = ['DEBUG', 'INFO', 'WARN'] as const;
export type ProxySystemLogLevel = (typeof SYSTEM_LOG_LEVELS)[number];
/** DynamoDB's default quota of write capacity units per table. */
const MAX_TABLE_WCU = 40_000;

/** Every setting with its default applied; optional ones stay optional. */
export type ResolvedProps = Required<
  Pick<
    CatalogueStackProps,
    | 'cataloguePrefix'
    | 'priceClass'
    | 'deletionProtection'
    | 'removalPolicy'
    | 'memorySize'
    | 'timeoutSeconds'
    | 'logRetentionDays'
    | 'accessLogRetentionDays'
    | 'tracing'
    | 'keyCacheTtlMs'
    | 'pointerTtlMs'
    | 'dependencyTimeoutMs'
    | 'errorRateThresholdPercent'
    | 'p99DurationThresholdMs'
    | 'unauthorizedPerMinuteThreshold'
    | 'adminMaxKeysPerOwner'
    | 'uploadBuilderMemorySize'
    | 'uploadBuilderTimeoutSeconds'
    | 'proxyDeployment'
    | 'countersCapacity'
    | 'countersMinWriteCapacity'
    | 'countersMaxWriteCapacity'
    | 'runbookUrl'
    | 'scheduledCheckMinutes'
    | 'checkKeyGeneration'
    | 'edge4xxRateThresholdPercent'
    | 'newVersion4xxIncreasePercent'
    | 'deployBakeMinutes'
    | 'noncurrentVersionDays'
    | 'adminLogRetentionDays'
  >
> & { incomingPrefix: string; reportsPrefix: string } & Pick<
    CatalogueStackProps,
    | 'domainName'
    | 'certificateArn'
    | 'webAclArn'
    | 'wafRateLimitPer5Min'
    | 'alarmEmail'
    | 'publisherPrincipalArn'
    | 'reservedConcurrency'
    | 'proxySystemLogLevel'
    | 'keysTableName'
  >;

export const DEFAULTS = {
  cataloguePrefix: 'catalogue/',
  priceClass: PriceClass.PRICE_CLASS_100,
  deletionProtection: true,
  removalPolicy: RemovalPolicy.RETAIN,
  memorySize: 512,
  timeoutSeconds: 10,
  logRetentionDays: 30,
  accessLogRetentionDays: 90,
  tracing: false,
  keyCacheTtlMs: KEY_CACHE_DEFAULTS.ttlMs,
  pointerTtlMs: 5_000,
  dependencyTimeoutMs: 2_000,
  errorRateThresholdPercent: 5,
  p99DurationThresholdMs: 2_000,
  unauthorizedPerMinuteThreshold: 600,
  adminMaxKeysPerOwner: 10,
  uploadBuilderMemorySize: 3008,
  uploadBuilderTimeoutSeconds: 900,
  proxyDeployment: 'Canary10Percent5Minutes',
  countersCapacity: 'on-demand',
  countersMinWriteCapacity: 25,
  countersMaxWriteCapacity: 4000,
  runbookUrl: 'docs/operating.md',
  scheduledCheckMinutes: 1,
  checkKeyGeneration: 1,
  edge4xxRateThresholdPercent: 50,
  newVersion4xxIncreasePercent: 20,
  deployBakeMinutes: 5,
  noncurrentVersionDays: 30,
  adminLogRetentionDays: 365,
} as const satisfies Partial<ResolvedProps>;

/** Retention values CloudWatch Logs accepts (the numeric values of `RetentionDays`, without INFINITE). */
const RETENTION_VALUES = Object.values(RetentionDays).filter(
  (value): value is number => typeof value === 'number' && value !== RetentionDays.INFINITE,
);

/** Bucket-key characters S3 documents as safe; wildcards would widen every IAM grant on the prefix. */
const PREFIX_PATTERN = /^(?:[A-Za-z0-9!_.'()-]+\/)*$/;
const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/;
const PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(?:root|role\/[\w+=,.@/-]+|user\/[\w+=,.@/-]+)$/;
const DOMAIN_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/**
 * Settings that cannot be used, one problem a line (`app.ts` prints them as they are, without a stack trace).
 * @example new SettingsError(['memorySize must be an integer between 128 and 10240 (got 64)'])
 */
export class SettingsError extends Error {
  override name = 'SettingsError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

/** The problem with an integer setting outside [min, max], if any. */
function integerIn(name: string, value: number, min: number, max: number): string | undefined {
  return !Number.isInteger(value) || value < min || value > max
    ? `${name} must be an integer between ${min} and ${max} (got ${value})`
    : undefined;
}

/** A string that is a literal (not a deploy-time token) and does not match `pattern`. */
function badLiteral(value: string | undefined, pattern: RegExp): boolean {
  return value !== undefined && !Token.isUnresolved(value) && !pattern.test(value);
}

/**
 * Apply the defaults and check every setting; throws a {@link SettingsError} naming every bad one.
 * The numeric bounds of the proxy settings are those of `proxy/config.ts`, so the stack never deploys a
 * configuration the proxy would refuse with `configuration_error`.
 * @example resolveProps({}).cataloguePrefix === 'catalogue/'
 */
export function resolveProps(props: CatalogueStackProps): ResolvedProps {
  const resolved = withDefaults(props);
  const problems = [
    ...prefixProblems(resolved),
    ...nameProblems(resolved),
    ...numberProblems(resolved),
    ...costProblems(resolved, props),
    ...watchProblems(resolved),
    oneOf('proxyDeployment', resolved.proxyDeployment, PROXY_DEPLOYMENTS),
  ];
  const found = problems.filter((problem): problem is string => problem !== undefined);
  if (found.length > 0) throw new SettingsError(found);
  return resolved;
}

/** Every setting with its default applied. */
function withDefaults(props: CatalogueStackProps): ResolvedProps {
  return {
    cataloguePrefix: props.cataloguePrefix ?? DEFAULTS.cataloguePrefix,
    priceClass: props.priceClass ?? DEFAULTS.priceClass,
    deletionProtection: props.deletionProtection ?? DEFAULTS.deletionProtection,
    removalPolicy: props.removalPolicy ?? DEFAULTS.removalPolicy,
    memorySize: props.memorySize ?? DEFAULTS.memorySize,
    timeoutSeconds: props.timeoutSeconds ?? DEFAULTS.timeoutSeconds,
    logRetentionDays: props.logRetentionDays ?? DEFAULTS.logRetentionDays,
    accessLogRetentionDays: props.accessLogRetentionDays ?? DEFAULTS.accessLogRetentionDays,
    tracing: props.tracing ?? DEFAULTS.tracing,
    keyCacheTtlMs: props.keyCacheTtlMs ?? DEFAULTS.keyCacheTtlMs,
    pointerTtlMs: props.pointerTtlMs ?? DEFAULTS.pointerTtlMs,
    dependencyTimeoutMs: props.dependencyTimeoutMs ?? DEFAULTS.dependencyTimeoutMs,
    errorRateThresholdPercent: props.errorRateThresholdPercent ?? DEFAULTS.errorRateThresholdPercent,
    p99DurationThresholdMs: props.p99DurationThresholdMs ?? DEFAULTS.p99DurationThresholdMs,
    unauthorizedPerMinuteThreshold:
      props.unauthorizedPerMinuteThreshold ?? DEFAULTS.unauthorizedPerMinuteThreshold,
    adminMaxKeysPerOwner: props.adminMaxKeysPerOwner ?? DEFAULTS.adminMaxKeysPerOwner,
    uploadBuilderMemorySize: props.uploadBuilderMemorySize ?? DEFAULTS.uploadBuilderMemorySize,
    uploadBuilderTimeoutSeconds: props.uploadBuilderTimeoutSeconds ?? DEFAULTS.uploadBuilderTimeoutSeconds,
    proxyDeployment: props.proxyDeployment ?? DEFAULTS.proxyDeployment,
    countersCapacity: props.countersCapacity ?? DEFAULTS.countersCapacity,
    countersMinWriteCapacity: props.countersMinWriteCapacity ?? DEFAULTS.countersMinWriteCapacity,
    countersMaxWriteCapacity: props.countersMaxWriteCapacity ?? DEFAULTS.countersMaxWriteCapacity,
    proxySystemLogLevel: props.proxySystemLogLevel,
    ...watchDefaults(props),
    ...UPLOAD_PREFIXES,
    domainName: props.domainName,
    certificateArn: props.certificateArn,
    webAclArn: props.webAclArn,
    wafRateLimitPer5Min: props.wafRateLimitPer5Min,
    alarmEmail: props.alarmEmail,
    publisherPrincipalArn: props.publisherPrincipalArn,
    reservedConcurrency: props.reservedConcurrency,
    keysTableName: props.keysTableName,
  };
}

/** The settings of the alarms, the checks and data protection, with their defaults. */
function watchDefaults(props: CatalogueStackProps) {
  return {
    runbookUrl: props.runbookUrl ?? DEFAULTS.runbookUrl,
    scheduledCheckMinutes: props.scheduledCheckMinutes ?? DEFAULTS.scheduledCheckMinutes,
    checkKeyGeneration: props.checkKeyGeneration ?? DEFAULTS.checkKeyGeneration,
    edge4xxRateThresholdPercent: props.edge4xxRateThresholdPercent ?? DEFAULTS.edge4xxRateThresholdPercent,
    newVersion4xxIncreasePercent: props.newVersion4xxIncreasePercent ?? DEFAULTS.newVersion4xxIncreasePercent,
    deployBakeMinutes: props.deployBakeMinutes ?? DEFAULTS.deployBakeMinutes,
    noncurrentVersionDays: props.noncurrentVersionDays ?? DEFAULTS.noncurrentVersionDays,
    adminLogRetentionDays: props.adminLogRetentionDays ?? DEFAULTS.adminLogRetentionDays,
  };
}

/** The catalogue prefix: safe key characters, and clear of the reference page's and the uploads' prefixes. */
function prefixProblems(r: ResolvedProps): (string | undefined)[] {
  const problems: (string | undefined)[] = [];
  if (!PREFIX_PATTERN.test(r.cataloguePrefix)) {
    problems.push(
      `cataloguePrefix must be '' or path segments each ending in '/', of letters, digits and !_.'()- (got '${r.cataloguePrefix}')`,
    );
  }
  // The API reference is deployed under docs/ with pruning: the catalogue must live elsewhere.
  if (r.cataloguePrefix.startsWith('docs/')) {
    problems.push(
      `cataloguePrefix must not be under docs/, where the API reference is deployed (got '${r.cataloguePrefix}')`,
    );
  }
  for (const prefix of Object.values(UPLOAD_PREFIXES)) {
    if (
      r.cataloguePrefix.startsWith(prefix) ||
      (r.cataloguePrefix !== '' && prefix.startsWith(r.cataloguePrefix))
    ) {
      problems.push(
        `cataloguePrefix must not contain or be under ${prefix}, where snapshots are uploaded and reports written (got '${r.cataloguePrefix}')`,
      );
    }
  }
  return problems;
}

/** The names given as literals: domain and certificate (together, in us-east-1), alarm e-mail, publisher. */
function nameProblems(r: ResolvedProps): (string | undefined)[] {
  const problems: (string | undefined)[] = [];
  if ((r.domainName === undefined) !== (r.certificateArn === undefined)) {
    problems.push('domainName and certificateArn must be given together');
  }
  if (badLiteral(r.domainName, DOMAIN_NAME)) {
    problems.push(`domainName must be a lower-case DNS name such as api.example.com (got '${r.domainName}')`);
  }
  if (badLiteral(r.certificateArn, CERTIFICATE_ARN)) {
    problems.push(`certificateArn must be the ARN of an ACM certificate (got '${r.certificateArn}')`);
  }
  const certificateRegion = r.certificateArn?.match(CERTIFICATE_ARN)?.[1];
  if (certificateRegion !== undefined && certificateRegion !== 'us-east-1') {
    problems.push(
      `certificateArn must be a certificate in us-east-1, the only region CloudFront uses (got ${certificateRegion})`,
    );
  }
  if (badLiteral(r.alarmEmail, EMAIL)) {
    problems.push(`alarmEmail must be an e-mail address (got '${r.alarmEmail}')`);
  }
  if (badLiteral(r.publisherPrincipalArn, PRINCIPAL_ARN)) {
    problems.push(
      `publisherPrincipalArn must be the ARN of an IAM role, user or account root (got '${r.publisherPrincipalArn}')`,
    );
  }
  return problems;
}

/** The numbers: each within its bounds (those of `proxy/config.ts` for the proxy's), and the timeouts together. */
function numberProblems(r: ResolvedProps): (string | undefined)[] {
  const problems: (string | undefined)[] = [];
  problems.push(integerIn('memorySize', r.memorySize, 128, 10_240));
  problems.push(integerIn('timeoutSeconds', r.timeoutSeconds, 1, 900));
  if (r.reservedConcurrency !== undefined)
    problems.push(integerIn('reservedConcurrency', r.reservedConcurrency, 1, 100_000));
  if (!RETENTION_VALUES.includes(r.logRetentionDays)) {
    problems.push(
      `logRetentionDays must be one of ${RETENTION_VALUES.join(', ')} (got ${r.logRetentionDays})`,
    );
  }
  problems.push(integerIn('accessLogRetentionDays', r.accessLogRetentionDays, 1, 3_650));
  problems.push(integerIn('keyCacheTtlMs', r.keyCacheTtlMs, 0, KEY_CACHE_MAX_MS));
  problems.push(integerIn('pointerTtlMs', r.pointerTtlMs, 0, 3_600_000));
  problems.push(integerIn('dependencyTimeoutMs', r.dependencyTimeoutMs, 1, 60_000));
  if (r.wafRateLimitPer5Min !== undefined) {
    if (r.webAclArn !== undefined)
      problems.push('webAclArn and wafRateLimitPer5Min exclude each other: give one web ACL or the other');
    // AWS WAF's bounds of a rate-based rule's limit.
    problems.push(integerIn('wafRateLimitPer5Min', r.wafRateLimitPer5Min, 10, 2_000_000_000));
  }
  problems.push(
    integerIn('unauthorizedPerMinuteThreshold', r.unauthorizedPerMinuteThreshold, 1, 100_000_000),
  );
  // The bound of admin/settings.ts: the owner's ledger holds one entry per usable key.
  problems.push(integerIn('adminMaxKeysPerOwner', r.adminMaxKeysPerOwner, 1, 100));
  if (r.timeoutSeconds * 1000 <= 4 * r.dependencyTimeoutMs) {
    problems.push(
      `timeoutSeconds (${r.timeoutSeconds}) must exceed four dependency timeouts (4 × ${r.dependencyTimeoutMs} ms)`,
    );
  }
  if (!(r.errorRateThresholdPercent > 0 && r.errorRateThresholdPercent <= 100)) {
    problems.push(
      `errorRateThresholdPercent must be above 0 and at most 100 (got ${r.errorRateThresholdPercent})`,
    );
  }
  problems.push(integerIn('p99DurationThresholdMs', r.p99DurationThresholdMs, 1, r.timeoutSeconds * 1000));
  problems.push(integerIn('uploadBuilderMemorySize', r.uploadBuilderMemorySize, 1024, 10_240));
  problems.push(integerIn('uploadBuilderTimeoutSeconds', r.uploadBuilderTimeoutSeconds, 120, 900));
  return problems;
}

/**
 * The problem with a setting that must be one of `choices`, if any, with the closest one when it is near.
 * @example oneOf('countersCapacity', 'provisoned', ['on-demand', 'provisioned'])
 *   // → "countersCapacity must be on-demand or provisioned (got 'provisoned'): did you mean provisioned?"
 */
function oneOf(name: string, value: string | undefined, choices: readonly string[]): string | undefined {
  if (value === undefined || choices.includes(value)) return undefined;
  const meant =
    choices.find((choice) => choice.toLowerCase() === String(value).toLowerCase()) ??
    closestMatch(String(value), [...choices], { maxDistance: 3 });
  const list = `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
  return `${name} must be ${list} (got '${value}')${meant ? `: did you mean ${meant}?` : ''}`;
}

/** The settings that cut the price at volume: the counters table's capacity, the proxy's system log level. */
function costProblems(r: ResolvedProps, given: CatalogueStackProps): (string | undefined)[] {
  const problems = [
    oneOf('countersCapacity', r.countersCapacity, COUNTERS_CAPACITIES),
    oneOf('proxySystemLogLevel', r.proxySystemLogLevel, SYSTEM_LOG_LEVELS),
  ];
  if (r.countersCapacity !== 'provisioned') {
    for (const name of ['countersMinWriteCapacity', 'countersMaxWriteCapacity'] as const)
      if (given[name] !== undefined) problems.push(`${name} applies only with countersCapacity=provisioned`);
    return problems;
  }
  problems.push(integerIn('countersMinWriteCapacity', r.countersMinWriteCapacity, 1, MAX_TABLE_WCU));
  problems.push(integerIn('countersMaxWriteCapacity', r.countersMaxWriteCapacity, 1, MAX_TABLE_WCU));
  if (r.countersMinWriteCapacity > r.countersMaxWriteCapacity) {
    problems.push(
      `countersMinWriteCapacity (${r.countersMinWriteCapacity}) must not exceed countersMaxWriteCapacity (${r.countersMaxWriteCapacity})`,
    );
  }
  return problems;
}

/** DynamoDB's table names: 3 to 255 of letters, digits, `_`, `-` and `.`. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
/** A runbook's address: an http(s) URL or a path, without a fragment (each alarm adds its own). */
const RUNBOOK_URL = /^(?:https?:\/\/[^\s#]+|[^\s#:]+)$/;

/** The alarms', the checks' and data protection's settings. */
function watchProblems(r: ResolvedProps): (string | undefined)[] {
  const problems: (string | undefined)[] = [
    integerIn('scheduledCheckMinutes', r.scheduledCheckMinutes, 1, 60),
    integerIn('checkKeyGeneration', r.checkKeyGeneration, 1, 1_000_000),
    integerIn('edge4xxRateThresholdPercent', r.edge4xxRateThresholdPercent, 1, 100),
    integerIn('newVersion4xxIncreasePercent', r.newVersion4xxIncreasePercent, 1, 100),
    // A Lambda hook runs at most 15 minutes: the bake and the smoke checks around it must fit.
    integerIn('deployBakeMinutes', r.deployBakeMinutes, 0, 14),
    integerIn('noncurrentVersionDays', r.noncurrentVersionDays, 1, 3_650),
  ];
  if (!RETENTION_VALUES.includes(r.adminLogRetentionDays)) {
    problems.push(
      `adminLogRetentionDays must be one of ${RETENTION_VALUES.join(', ')} (got ${r.adminLogRetentionDays})`,
    );
  }
  if (badLiteral(r.keysTableName, TABLE_NAME)) {
    problems.push(
      `keysTableName must be a DynamoDB table name: 3 to 255 letters, digits, _ - or . (got '${r.keysTableName}')`,
    );
  }
  if (badLiteral(r.runbookUrl, RUNBOOK_URL)) {
    problems.push(`runbookUrl must be an http(s) URL or a path, without #fragment (got '${r.runbookUrl}')`);
  }
  return problems;
}
