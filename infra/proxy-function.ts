/**
 * The proxy Lambda (bundled from `proxy/lambda-entry.ts`), its least-privilege role, its log group, the cursor
 * secret it is configured with, the version each deploy publishes, the `live` alias CodeDeploy moves from one
 * version to the next (infra/deploys.ts), and the alias's function URL CloudFront reaches it through.
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { KEY_CACHE_DEFAULTS } from '../tables/schema.js';
import { bundledFunction } from './bundling.js';
import { ownLogsAndRole } from './function-role.js';
import { prefixWildcardFinding } from './nag.js';
import { metricsNamespace } from './request-metrics.js';

/** The alias CloudFront reaches: the version a deploy has finished moving traffic to. */
export const LIVE_ALIAS = 'live';

/** The repository root: the bundler resolves `proxy/` and `node_modules/` from here. */
/** The proxy's Lambda entry point (exports `handler`). */
export const PROXY_ENTRY = fileURLToPath(new URL('../proxy/lambda-entry.ts', import.meta.url));

export interface ProxyFunctionProps {
  readonly bucket: s3.IBucket;
  /** Key prefix of the published catalogue: `''` or ending in `/`. */
  readonly cataloguePrefix: string;
  readonly keysTable: dynamodb.ITable;
  readonly countersTable: dynamodb.ITable;
  /**
   * Memory in MB.
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * Timeout in seconds.
   * @default 10
   */
  readonly timeoutSeconds?: number;
  /**
   * Reserved concurrency.
   * @default - none
   */
  readonly reservedConcurrency?: number;
  /**
   * Log retention in days (a `RetentionDays` value).
   * @default 30
   */
  readonly logRetentionDays?: number;
  /**
   * Removal policy of the log group.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * X-Ray active tracing.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * `KEY_CACHE_TTL_MS`.
   * @default 30000
   */
  readonly keyCacheTtlMs?: number;
  /**
   * `POINTER_TTL_MS`.
   * @default 5000
   */
  readonly pointerTtlMs?: number;
  /**
   * `DEPENDENCY_TIMEOUT_MS`.
   * @default 2000
   */
  readonly dependencyTimeoutMs?: number;
  /**
   * Lambda's system log level (`WARN` drops the START, END and REPORT lines); setting one makes the log format
   * JSON, as log-level filtering needs.
   * @default - Lambda's default: INFO, plain text
   */
  readonly systemLogLevel?: 'DEBUG' | 'INFO' | 'WARN';
}

export class ProxyFunction extends Construct {
  readonly function: NodejsFunction;
  /** The version this deploy publishes (a new one whenever the code or the configuration changes). */
  readonly version: lambda.Version;
  /** `live`: what the function URL invokes; a deploy moves it to {@link version} (infra/deploys.ts). */
  readonly alias: lambda.Alias;
  /** The alias's function URL (`…/live`), the distribution's origin. */
  readonly functionUrl: lambda.FunctionUrl;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** HMAC key that binds cursors to their query (`CURSOR_SECRET`). */
  readonly cursorSecret: secretsmanager.Secret;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a CDK constructor: the function, its log group, secret and grants declared in order (test/layout/functions.test.ts names it)
  constructor(scope: Construct, id: string, props: ProxyFunctionProps) {
    super(scope, id);
    const prefix = props.cataloguePrefix;

    this.cursorSecret = new secretsmanager.Secret(this, 'CursorSecret', {
      description: 'HMAC key of the Catalogue Read API cursors (CURSOR_SECRET of the proxy Lambda)',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
    });
    Validations.of(this.cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating the cursor key invalidates every open cursor (consumers paging through a list get 400 invalid_parameter); it is rotated by hand when compromised (docs/operating.md), not on a schedule. The proxy reads it from Secrets Manager at cold start and again every 5 minutes, so a new value needs no deployment.',
    });

    // A role of our own instead of the default one (infra/function-role.ts).
    ({ logGroup: this.logGroup, role: this.role } = ownLogsAndRole(this, {
      description: 'Catalogue Read API proxy: read published objects, read keys, meter quota',
      logRetentionDays: props.logRetentionDays,
      removalPolicy: props.removalPolicy,
    }));
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadPublishedObjects',
        actions: ['s3:GetObject'],
        resources: [props.bucket.arnForObjects(`${prefix}*`)],
      }),
    );
    // Without s3:ListBucket, S3 answers GetObject on a missing key with 403 instead of 404, and the proxy
    // could not tell "no such object" from "not allowed". Limited to listing under the prefix.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ListPublishedObjects',
        actions: ['s3:ListBucket'],
        resources: [props.bucket.bucketArn],
        ...(prefix === '' ? {} : { conditions: { StringLike: { 's3:prefix': [`${prefix}*`] } } }),
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadKeys',
        actions: ['dynamodb:GetItem'],
        resources: [props.keysTable.tableArn],
      }),
    );
    // This one secret only; it is encrypted with the AWS-managed key, so no KMS grant is needed.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadCursorSecret',
        actions: ['secretsmanager:GetSecretValue'],
        resources: [this.cursorSecret.secretArn],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'MeterQuota',
        actions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'],
        resources: [props.countersTable.tableArn],
      }),
    );
    Validations.of(this.role).acknowledge({
      id: prefixWildcardFinding(props.bucket, prefix),
      reason:
        'Objects are content-addressed (their keys are hashes known only at publish time), so reads are granted on the catalogue prefix; nothing outside the prefix is readable.',
    });

    this.function = new NodejsFunction(this, 'Function', {
      ...bundledFunction(this, {
        fn: 'proxy-function',
        entry: PROXY_ENTRY,
        // The function carries no AWS SDK: the request path's one client is lean signed requests
        // (aws/signed.ts), and proxy/ imports only the SDK's types. Leaving `@aws-sdk/*` out keeps an
        // accidental import from bundling it: test/infra/stack.test.ts checks that nothing imports a package
        // at load time.
        externalModules: ['@aws-sdk/*'],
      }),
      description: 'Catalogue Read API proxy: authenticate, meter, stream precomputed objects',
      memorySize: props.memorySize ?? 512,
      timeout: Duration.seconds(props.timeoutSeconds ?? 10),
      reservedConcurrentExecutions: props.reservedConcurrency,
      tracing: props.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      role: this.role,
      logGroup: this.logGroup,
      // Versions are kept when the next one replaces them: the alias can be moved back to one at once
      // (docs/operating.md, "Safe deploys"); Lambda deletes every version with the function.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
      // The proxy's own lines are JSON with no `level` (Lambda takes them as INFO): unchanged by the format.
      ...(props.systemLogLevel && {
        loggingFormat: lambda.LoggingFormat.JSON,
        systemLogLevelV2: lambda.SystemLogLevel[props.systemLogLevel],
        applicationLogLevelV2: lambda.ApplicationLogLevel.INFO,
      }),
      environment: {
        CATALOGUE_BUCKET: props.bucket.bucketName,
        CATALOGUE_PREFIX: prefix,
        KEYS_TABLE: props.keysTable.tableName,
        COUNTERS_TABLE: props.countersTable.tableName,
        KEY_CACHE_TTL_MS: String(props.keyCacheTtlMs ?? KEY_CACHE_DEFAULTS.ttlMs),
        POINTER_TTL_MS: String(props.pointerTtlMs ?? 5_000),
        DEPENDENCY_TIMEOUT_MS: String(props.dependencyTimeoutMs ?? 2_000),
        // The ARN, not the value: the proxy reads the secret from Secrets Manager at cold start (and again
        // when it is 5 minutes old), so it never appears in the function's configuration, which anyone with
        // lambda:GetFunctionConfiguration (part of AWS's ReadOnlyAccess) can read. Costs one GetSecretValue
        // round trip per cold start (docs/configuration.md).
        CURSOR_SECRET_ARN: this.cursorSecret.secretArn,
        // The request metrics each request line carries (embedded metric format, proxy/log/metrics.ts).
        METRICS_NAMESPACE: metricsNamespace(this),
        // No --enable-source-maps: Node would read and parse the map when the function loads (a fifth of
        // the asset's import cost, bench section 10), for stack traces the proxy never logs (its log lines
        // name errors, never stacks). The map stays in the asset: `node --enable-source-maps` maps a trace.
      },
    });
    if (props.tracing) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which do not support resource-level permissions.',
      });
    }

    // Each deploy publishes a version. The alias is created on the first deploy pointing at the first
    // version; on later ones CodeDeploy moves it (infra/deploys.ts).
    this.version = this.function.currentVersion;
    this.alias = new lambda.Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.version });

    // On the alias, not the function: CloudFront reaches the version the alias routes to, never $LATEST.
    // AWS_IAM: only SigV4-signed requests reach it, i.e. CloudFront's origin access control (the
    // distribution's permissions, on the alias, are added by the origin). RESPONSE_STREAM: the proxy streams.
    this.functionUrl = this.alias.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.AWS_IAM,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });
  }
}
