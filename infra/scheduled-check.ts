/**
 * A check from outside, on a schedule (docs/operating.md, "The scheduled check"): every `scheduledCheckMinutes`
 * a function runs the smoke checks of `npm run smoke` (ops/lambda.ts, the same code) through the public URL with
 * the stack's own check key, and logs one line with the metric `ScheduledCheckPassed`; an alarm fires when two
 * of three runs fail or do not report (missing data is breaching: a schedule that stopped, a function that
 * cannot start, are failures too).
 *
 * Why a scheduled Lambda function and not CloudWatch Synthetics: a canary run a minute costs about $52 a month
 * ($0.0012 a run), more than the whole stack at a million requests; this function, ~43,200 runs of about a
 * second at 256 MB, costs cents, and runs the project's own checks, so what CI, an operator and the schedule
 * check is one thing. What Synthetics would add (runs from several regions, screenshots, a browser) this API
 * has no use for.
 *
 * The check key: a key of its own (admin/check-key.ts, a custom resource at deploy), its plain form in a
 * Secrets Manager secret, partner limits of 30 a minute and 200,000 a month — a run makes two metered requests,
 * 89,280 in a month of 31 days at one a minute, so the schedule, a deploy hook and an operator's
 * `npm run smoke -- --stack` never meet a 429.
 */
import { fileURLToPath } from 'node:url';
import { CustomResource, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { bundledFunction } from './bundling.js';
import { ownLogsAndRole } from './function-role.js';
import { prefixWildcardFinding } from './nag.js';
import { metricsNamespace } from './request-metrics.js';
import { runbookDescription } from './runbook.js';

/** The check functions' entry point (exports `handler` and `deployHook`). */
export const CHECK_ENTRY = fileURLToPath(new URL('../ops/lambda.ts', import.meta.url));
/** The check key's custom resource handler. */
export const CHECK_KEY_ENTRY = fileURLToPath(new URL('../admin/check-key.ts', import.meta.url));

/**
 * The metric a run logs (ops/scheduled.ts SCHEDULED_CHECK_METRIC; infra imports no product code, and
 * test/infra/scheduled-check.test.ts checks that both agree).
 */
export const SCHEDULED_CHECK_METRIC = { name: 'ScheduledCheckPassed', dimensions: { check: 'public-url' } };

/** The check key's limits: a run is two metered requests (a 200 and its 304). */
export const CHECK_KEY_LIMITS = { minute: 30, month: 200_000 };

/**
 * What the live version check reads of the catalogue (store/layout.ts POINTER_KEY, VERSIONS_DIR; checked by
 * test/infra/scheduled-check.test.ts): the pointer, the versions' files and the publication log.
 */
export const LIVE_VERSION_READS = { pointer: 'current.json', versions: 'versions/' };

/** Where the checks go and what they may read. */
export interface CheckTargets {
  /** `https://<domain>/v1`: the custom domain when set, else the distribution's. */
  readonly apiUrl: string;
  /** `https://<domain>/docs`. */
  readonly docsUrl: string;
  /** The admin API's base URL (checked unsigned: it must refuse). */
  readonly adminUrl: string;
  readonly bucket: s3.IBucket;
  readonly cataloguePrefix: string;
}

export interface ScheduledCheckProps extends CheckTargets {
  /** The keys table the check key is registered in. */
  readonly keysTable: dynamodb.ITable;
  /** The counters table: registering the check key lifts a stop a revoke left in its counter items. */
  readonly countersTable: dynamodb.ITable;
  /** Minutes between runs. */
  readonly minutes: number;
  /** Raised by one to rotate the check key. */
  readonly keyGeneration: number;
  readonly logRetentionDays?: number;
  readonly removalPolicy?: RemovalPolicy;
}

/** The statements that read what the checks read: the check key's secret and the live version's files. */
export function checkReadStatements(
  targets: CheckTargets,
  secret: secretsmanager.ISecret,
): iam.PolicyStatement[] {
  const prefix = targets.cataloguePrefix;
  return [
    new iam.PolicyStatement({
      sid: 'ReadCheckKey',
      actions: ['secretsmanager:GetSecretValue'],
      resources: [secret.secretArn],
    }),
    new iam.PolicyStatement({
      sid: 'ReadLiveVersion',
      actions: ['s3:GetObject'],
      resources: [
        targets.bucket.arnForObjects(`${prefix}${LIVE_VERSION_READS.pointer}`),
        targets.bucket.arnForObjects(`${prefix}${LIVE_VERSION_READS.versions}*`),
      ],
    }),
    new iam.PolicyStatement({
      sid: 'ListVersions',
      actions: ['s3:ListBucket'],
      resources: [targets.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${prefix}${LIVE_VERSION_READS.versions}*`] } },
    }),
  ];
}

/** Acknowledge, on `scope`, the read of every file under the catalogue's `versions/` (cdk-nag's IAM5). */
export function acknowledgeVersionsRead(scope: Construct, targets: CheckTargets): void {
  Validations.of(scope).acknowledge({
    id: prefixWildcardFinding(targets.bucket, `${targets.cataloguePrefix}${LIVE_VERSION_READS.versions}`),
    reason:
      "The live version check reads the publication log and lists the versions' files under versions/ (their names are version ids known only when published), as npm run catalogue -- versions does; nothing else of the catalogue.",
  });
}

/**
 * A check function (ops/lambda.ts's `handler` or `deployHook`) with its own role and log group, reading the
 * check key and the live version.
 */
export function checkFunction(
  scope: Construct,
  options: {
    handler: 'handler' | 'deployHook';
    fn: string;
    description: string;
    targets: CheckTargets;
    secret: secretsmanager.ISecret;
    timeout: Duration;
    environment?: Record<string, string>;
    logRetentionDays?: number | undefined;
    removalPolicy?: RemovalPolicy | undefined;
  },
): { function: NodejsFunction; role: iam.Role } {
  const { role, logGroup } = ownLogsAndRole(scope, {
    description: options.description,
    logRetentionDays: options.logRetentionDays,
    removalPolicy: options.removalPolicy,
  });
  for (const statement of checkReadStatements(options.targets, options.secret)) role.addToPolicy(statement);
  acknowledgeVersionsRead(role, options.targets);
  const fn = new NodejsFunction(scope, 'Function', {
    // The AWS SDK is the runtime's (Node.js 24 carries v3): only the live version check uses it, to read and
    // list the catalogue's pointer and log, as `npm run catalogue -- versions` does; the rest is lean signed
    // requests. The bundle stays small and quick to build.
    ...bundledFunction(scope, { fn: options.fn, entry: CHECK_ENTRY, externalModules: ['@aws-sdk/*'] }),
    handler: options.handler,
    description: options.description,
    memorySize: 256,
    timeout: options.timeout,
    role,
    logGroup,
    environment: {
      CHECK_API_URL: options.targets.apiUrl,
      CHECK_DOCS_URL: options.targets.docsUrl,
      CHECK_ADMIN_URL: options.targets.adminUrl,
      CHECK_CATALOGUE_URI: `s3://${options.targets.bucket.bucketName}/${options.targets.cataloguePrefix}`,
      CHECK_KEY_SECRET_ARN: options.secret.secretArn,
      METRICS_NAMESPACE: metricsNamespace(scope),
      ...options.environment,
    },
  });
  return { function: fn, role };
}

export class ScheduledCheck extends Construct {
  /** The check key's plain form (read by the check functions and by `npm run smoke -- --stack`). */
  readonly secret: secretsmanager.Secret;
  /** The check key's id (`CheckKeyId`): revoke or look it up with `npm run keys`. */
  readonly keyId: string;
  readonly function: NodejsFunction;
  readonly alarm: cloudwatch.Alarm;
  /** What `npm run smoke -- --stack` needs, and nothing more (`SmokeCheckPolicyArn`). */
  readonly smokePolicy: iam.ManagedPolicy;
  /** The custom resource that provisions the key (deploys that shift traffic wait for it). */
  readonly key: CustomResource;

  constructor(scope: Construct, id: string, props: ScheduledCheckProps) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'KeySecret', {
      description: 'Catalogue Read API: the scheduled smoke check key (made and registered at deploy)',
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The check key is rotated by raising checkKeyGeneration: the next deploy makes a new key, puts it here and revokes the previous one (admin/check-key.ts); a Secrets Manager rotation function could not register the new key in the keys table.',
    });
    this.key = this.#provisionKey(props);
    this.keyId = this.key.getAttString('KeyId');

    const check = checkFunction(this, {
      handler: 'handler',
      fn: 'scheduled-check',
      description: 'Catalogue Read API scheduled check: the smoke checks through the public URL',
      targets: props,
      secret: this.secret,
      timeout: Duration.seconds(50),
      logRetentionDays: props.logRetentionDays,
      removalPolicy: props.removalPolicy,
    });
    this.function = check.function;
    // A failed run is not run again: the next one is a minute away, and the alarm counts runs.
    this.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    new events.Rule(this, 'Schedule', {
      description: 'Catalogue Read API: run the scheduled smoke check',
      schedule: events.Schedule.rate(Duration.minutes(props.minutes)),
      targets: [
        new targets.LambdaFunction(this.function, { retryAttempts: 0, maxEventAge: Duration.minutes(1) }),
      ],
    });
    this.alarm = this.#alarm(props.minutes);
    this.smokePolicy = this.#smokePolicy(props);
  }

  /** The secret's key made and registered by the custom resource's function (admin/check-key.ts). */
  #provisionKey(props: ScheduledCheckProps): CustomResource {
    const scope = new Construct(this, 'KeyProvider');
    const { role, logGroup } = ownLogsAndRole(scope, {
      description: 'Catalogue Read API check key: make it, keep it in its secret, register it (deploys only)',
      logRetentionDays: props.logRetentionDays,
      removalPolicy: props.removalPolicy,
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'KeepCheckKey',
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'],
        resources: [this.secret.secretArn],
      }),
    );
    // register() and revokeKey() are each one UpdateItem of the key's own item; register() also lifts a
    // revoke's stop from the key's counter items (admin/stop.ts), one UpdateItem each.
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'RegisterCheckKey',
        actions: ['dynamodb:UpdateItem'],
        resources: [props.keysTable.tableArn, props.countersTable.tableArn],
      }),
    );
    const handler = new NodejsFunction(scope, 'Function', {
      ...bundledFunction(scope, { fn: 'check-key', entry: CHECK_KEY_ENTRY, externalModules: ['@aws-sdk/*'] }),
      description:
        'Catalogue Read API: provisions the scheduled check key (a CloudFormation custom resource)',
      memorySize: 256,
      timeout: Duration.seconds(60),
      role,
      logGroup,
    });
    return new CustomResource(this, 'Key', {
      serviceToken: handler.functionArn,
      resourceType: 'Custom::CatalogueCheckKey',
      properties: {
        KeysTable: props.keysTable.tableName,
        CountersTable: props.countersTable.tableName,
        SecretArn: this.secret.secretArn,
        Label: `scheduled smoke check (${Stack.of(this).stackName})`,
        LimitMinute: String(CHECK_KEY_LIMITS.minute),
        LimitMonth: String(CHECK_KEY_LIMITS.month),
        Generation: String(props.keyGeneration),
      },
    });
  }

  /** Two of three runs failed or missing: the check, or the API, is down. */
  #alarm(minutes: number): cloudwatch.Alarm {
    return new cloudwatch.Metric({
      namespace: metricsNamespace(this),
      metricName: SCHEDULED_CHECK_METRIC.name,
      dimensionsMap: SCHEDULED_CHECK_METRIC.dimensions,
      statistic: cloudwatch.Stats.MINIMUM,
      period: Duration.minutes(minutes),
    }).createAlarm(this, 'Alarm', {
      alarmName: `${Stack.of(this).stackName}-scheduled-check-failed`,
      alarmDescription: runbookDescription(
        this,
        'scheduled-check-failed',
        'The scheduled smoke check through the public URL failed, or did not report, in two of its last three runs: what a consumer meets is broken (DNS, certificate, distribution, viewer function, the proxy, keys, the catalogue) or the check itself cannot run. Its log line names the failing checks.',
      ),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      // A schedule that stopped, or a function that cannot start or log, is a failure.
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
  }

  /** `npm run smoke -- --stack`'s read access: the stack's outputs, the check key, the live version. */
  #smokePolicy(props: CheckTargets): iam.ManagedPolicy {
    const stack = Stack.of(this);
    const policy = new iam.ManagedPolicy(this, 'SmokePolicy', {
      description: `npm run smoke -- --stack ${stack.stackName}: read its outputs, the check key and the live version; nothing else`,
      statements: [
        new iam.PolicyStatement({
          sid: 'ReadStackOutputs',
          actions: ['cloudformation:DescribeStacks'],
          resources: [stack.stackId],
        }),
        ...checkReadStatements(props, this.secret),
      ],
    });
    acknowledgeVersionsRead(policy, props);
    return policy;
  }
}
