/**
 * The Catalogue Read API in one stack: storage, the proxy Lambda and its safe deploys, the CloudFront edge,
 * alarms, the dashboard, the publisher role, the admin API and the upload builder. Settings and their
 * defaults: `props.ts`; CDK context names: `context.ts`.
 */
import { Aws, CfnOutput, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { buildReferenceSync } from '../docs/reference/build.js';
import { AdminApi } from './admin.js';
import { AlarmTopic } from './alarm-topic.js';
import { Alarms } from './alarms.js';
import { Dashboard } from './dashboard.js';
import { ProxyDeploys } from './deploys.js';
import { Edge } from './edge.js';
import { EdgeAlarmsStack } from './edge-alarms.js';
import { LogMetrics } from './log-metrics.js';
import { type CatalogueStackProps, type ResolvedProps, resolveProps } from './props.js';
import { ProxyFunction } from './proxy-function.js';
import { PublisherRole } from './publisher.js';
import { ApiReference } from './reference.js';
import { useRunbook } from './runbook.js';
import { ScheduledCheck } from './scheduled-check.js';
import { Storage } from './storage.js';
import { UPLOAD_EVENT_SOURCE, UploadBuilder } from './upload-builder.js';
import { UploadFailures } from './upload-failures.js';
import { watchOutputs } from './watch-outputs.js';

export type { CatalogueStackProps } from './props.js';

export class CatalogueStack extends Stack {
  readonly settings: ResolvedProps;
  readonly storage: Storage;
  readonly proxy: ProxyFunction;
  readonly edge: Edge;
  readonly reference: ApiReference;
  readonly alarms: Alarms;
  readonly publisher: PublisherRole;
  readonly admin: AdminApi;
  readonly uploads: UploadBuilder;
  readonly deploys: ProxyDeploys;
  readonly logMetrics: LogMetrics;
  readonly dashboard: Dashboard;
  /** The topic every alarm of this stack notifies (`AlarmTopicArn`). */
  readonly alarmTopic: AlarmTopic;
  readonly uploadFailures: UploadFailures;
  readonly scheduledCheck: ScheduledCheck;
  /** The CloudFront alarms, in a stack of their own in us-east-1 (infra/edge-alarms.ts). */
  readonly edgeAlarms: EdgeAlarmsStack;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a CDK constructor: the stack's constructs wired to one another in order (test/layout/functions.test.ts names it)
  constructor(scope: Construct, id: string, props: CatalogueStackProps = {}) {
    // Validate before anything is created, so a bad setting fails with its own message.
    const settings = resolveProps(props);
    super(scope, id, {
      description: 'Catalogue Read API: key-authenticated read API over precomputed catalogue objects',
      ...props,
    });
    this.settings = settings;
    const s = settings;
    useRunbook(this, s.runbookUrl);
    this.alarmTopic = new AlarmTopic(this, 'AlarmTopic', { alarmEmail: s.alarmEmail });

    this.storage = new Storage(this, 'Storage', {
      removalPolicy: s.removalPolicy,
      deletionProtection: s.deletionProtection,
      accessLogRetentionDays: s.accessLogRetentionDays,
      noncurrentVersionDays: s.noncurrentVersionDays,
      keysTableName: s.keysTableName,
      countersCapacity:
        s.countersCapacity === 'provisioned'
          ? { mode: 'provisioned', min: s.countersMinWriteCapacity, max: s.countersMaxWriteCapacity }
          : { mode: 'on-demand' },
    });
    const { bucket, keysTable, countersTable, logBucket } = this.storage;

    this.proxy = new ProxyFunction(this, 'Proxy', {
      bucket,
      cataloguePrefix: s.cataloguePrefix,
      keysTable,
      countersTable,
      memorySize: s.memorySize,
      timeoutSeconds: s.timeoutSeconds,
      reservedConcurrency: s.reservedConcurrency,
      logRetentionDays: s.logRetentionDays,
      removalPolicy: s.removalPolicy,
      tracing: s.tracing,
      keyCacheTtlMs: s.keyCacheTtlMs,
      pointerTtlMs: s.pointerTtlMs,
      dependencyTimeoutMs: s.dependencyTimeoutMs,
      systemLogLevel: s.proxySystemLogLevel,
    });

    this.edge = new Edge(this, 'Edge', {
      functionUrl: this.proxy.functionUrl,
      logBucket,
      domainName: s.domainName,
      certificateArn: s.certificateArn,
      webAclArn: s.webAclArn,
      wafRateLimitPer5Min: s.wafRateLimitPer5Min,
      priceClass: s.priceClass,
    });

    // The API reference page at /docs, built from proxy/openapi.json at synth (cached between synths).
    this.reference = new ApiReference(this, 'Reference', {
      site: buildReferenceSync(),
      bucket,
      distribution: this.edge.distribution,
      logRetentionDays: s.logRetentionDays,
    });

    this.publisher = new PublisherRole(this, 'Publisher', {
      bucket,
      cataloguePrefix: s.cataloguePrefix,
      principalArn: s.publisherPrincipalArn,
    });

    // The key-administration API: its own IAM-authenticated function URL, no route from the distribution.
    this.admin = new AdminApi(this, 'Admin', {
      keysTable,
      countersTable,
      maxKeysPerOwner: s.adminMaxKeysPerOwner,
      keyCacheTtlMs: s.keyCacheTtlMs,
      logRetentionDays: s.adminLogRetentionDays,
      removalPolicy: s.removalPolicy,
    });
    this.uploadFailures = new UploadFailures(this, 'UploadFailures');
    // Publishing by upload: the builder in the bucket's region, triggered by a completed snapshot upload.
    this.uploads = new UploadBuilder(this, 'Uploads', {
      bucket,
      cataloguePrefix: s.cataloguePrefix,
      incomingPrefix: s.incomingPrefix,
      reportsPrefix: s.reportsPrefix,
      memorySize: s.uploadBuilderMemorySize,
      timeoutSeconds: s.uploadBuilderTimeoutSeconds,
      logRetentionDays: s.logRetentionDays,
      removalPolicy: s.removalPolicy,
      onFailure: this.uploadFailures.destination,
    });
    this.uploadFailures.watchDropped(this.uploads.function);
    this.logMetrics = new LogMetrics(this, 'LogMetrics', {
      adminLogGroup: this.admin.logGroup,
      uploadLogGroup: this.uploads.logGroup,
    });
    // The smoke checks from outside, every scheduledCheckMinutes, through the public name (infra/scheduled-check.ts).
    const publicOrigin = `https://${s.domainName ?? this.edge.distribution.distributionDomainName}`;
    const checkTargets = {
      apiUrl: `${publicOrigin}/v1`,
      docsUrl: `${publicOrigin}/docs`,
      adminUrl: `${this.admin.functionUrl.url}v1`,
      bucket,
      cataloguePrefix: s.cataloguePrefix,
    };
    this.scheduledCheck = new ScheduledCheck(this, 'ScheduledCheck', {
      ...checkTargets,
      keysTable,
      countersTable,
      minutes: s.scheduledCheckMinutes,
      keyGeneration: s.checkKeyGeneration,
      logRetentionDays: s.logRetentionDays,
      removalPolicy: s.removalPolicy,
    });
    // Each deploy of the proxy moves traffic to its new version as proxyDeployment says (infra/deploys.ts).
    this.deploys = new ProxyDeploys(this, 'Deploys', {
      function: this.proxy.function,
      alias: this.proxy.alias,
      version: this.proxy.version,
      deployment: s.proxyDeployment,
      errorRateThresholdPercent: s.errorRateThresholdPercent,
      p99DurationThresholdMs: s.p99DurationThresholdMs,
      newVersion4xxIncreasePercent: s.newVersion4xxIncreasePercent,
      hook: {
        targets: checkTargets,
        secret: this.scheduledCheck.secret,
        key: this.scheduledCheck.key,
        bakeMinutes: s.deployBakeMinutes,
        logRetentionDays: s.logRetentionDays,
      },
    });
    this.alarms = new Alarms(this, 'Alarms', {
      proxy: this.proxy.function,
      keysTable,
      countersTable,
      errorRateThresholdPercent: s.errorRateThresholdPercent,
      p99DurationThresholdMs: s.p99DurationThresholdMs,
      proxyLogGroup: this.proxy.logGroup,
      unauthorizedPerMinuteThreshold: s.unauthorizedPerMinuteThreshold,
      admin: this.admin.function,
      logMetrics: this.logMetrics,
    });
    // CloudFront's metrics are in us-east-1: its alarms are a stack there (infra/edge-alarms.ts).
    this.edgeAlarms = new EdgeAlarmsStack(scope, `${id}EdgeAlarms`, {
      apiStackName: this.stackName,
      apiRegion: homeRegion(this),
      alarmEmail: s.alarmEmail,
      errorRateThresholdPercent: s.errorRateThresholdPercent,
      edge4xxRateThresholdPercent: s.edge4xxRateThresholdPercent,
      runbookUrl: s.runbookUrl,
      ...(props.tags && { tags: props.tags }),
    });
    this.edgeAlarms.addStackDependency(this, 'reads the DistributionId output');

    this.dashboard = new Dashboard(this, 'Dashboard', {
      proxy: this.proxy.function,
      admin: this.admin.function,
      keysTable,
      countersTable,
      distributionId: this.edge.distribution.distributionId,
      logMetrics: this.logMetrics,
      uploadLogGroup: this.uploads.logGroup,
      alarms: this.node
        .findAll()
        .filter((node): node is cloudwatch.Alarm => node instanceof cloudwatch.Alarm),
      reservedConcurrency: s.reservedConcurrency,
    });

    const distributionDomain = this.edge.distribution.distributionDomainName;
    const outputs: Record<string, { value: string; description: string }> = {
      ApiUrl: {
        value: `https://${s.domainName ?? distributionDomain}/v1`,
        description: 'Base URL of the API (send Authorization: Bearer <key>)',
      },
      ReferenceUrl: {
        value: `https://${s.domainName ?? distributionDomain}/docs`,
        description: 'The API reference page (no key needed; its OpenAPI document at /docs/openapi.json)',
      },
      DistributionDomainName: {
        value: distributionDomain,
        description: 'CloudFront domain name (target of the custom domain CNAME or alias)',
      },
      DistributionId: {
        value: this.edge.distribution.distributionId,
        description: 'CloudFront distribution id',
      },
      Region: { value: this.region, description: 'Region of the bucket, tables and Lambda (AWS_REGION)' },
      BucketName: { value: bucket.bucketName, description: 'Bucket of the published catalogue' },
      CataloguePrefix: { value: s.cataloguePrefix, description: 'Key prefix of the published catalogue' },
      CatalogueUri: {
        value: `s3://${bucket.bucketName}/${s.cataloguePrefix}`,
        description: 'Where the builder publishes (npm run catalogue -- build --out <this>)',
      },
      AccessLogBucketName: {
        value: logBucket.bucketName,
        description: 'Bucket of the S3 (s3-access/) and CloudFront (cloudfront/) access logs',
      },
      KeysTableName: { value: keysTable.tableName, description: 'DynamoDB keys table (KEYS_TABLE)' },
      CountersTableName: {
        value: countersTable.tableName,
        description: 'DynamoDB quota counters table (COUNTERS_TABLE)',
      },
      PublisherRoleArn: { value: this.publisher.role.roleArn, description: 'Role to assume to publish' },
      AdminApiUrl: {
        value: `${this.admin.functionUrl.url}v1`,
        description: 'Base URL of the key-administration API (SigV4-signed requests, service lambda)',
      },
      AdminCallerPolicyArn: {
        value: this.admin.callerPolicy.managedPolicyArn,
        description: "Managed policy to attach to the publisher's application's role: call the admin API",
      },
      AdminFunctionName: {
        value: this.admin.function.functionName,
        description: 'Admin API Lambda function',
      },
      AdminLogGroupName: {
        value: this.admin.logGroup.logGroupName,
        description: 'Admin API log group: one audit line per call',
      },
      UploadUri: {
        value: `s3://${bucket.bucketName}/${s.incomingPrefix}`,
        description: 'Where to upload a snapshot (<this><name>.tar.gz): it is validated and published',
      },
      ReportsUri: {
        value: `s3://${bucket.bucketName}/${s.reportsPrefix}`,
        description: "Where each upload's report is written (<this><name>.json)",
      },
      UploadPolicyArn: {
        value: this.uploads.uploadPolicy.managedPolicyArn,
        description:
          "The only permission the publisher's application needs: upload snapshots, read their reports",
      },
      UploadEventPattern: {
        value: JSON.stringify({ source: [UPLOAD_EVENT_SOURCE] }),
        description: "EventBridge pattern of the upload builder's events on the default bus (one per upload)",
      },
      UploadBuilderFunctionName: {
        value: this.uploads.function.functionName,
        description: 'The upload builder Lambda function',
      },
      UploadBuilderLogGroupName: {
        value: this.uploads.logGroup.logGroupName,
        description: 'The upload builder log group (progress and one line per upload)',
      },
      ProxyFunctionName: { value: this.proxy.function.functionName, description: 'Proxy Lambda function' },
      ProxyLiveAliasArn: {
        value: this.proxy.alias.functionArn,
        description: "The proxy's live alias: the version CloudFront reaches (a deploy moves it)",
      },
      ProxyDeploymentApplication: {
        value: this.deploys.deploymentGroup.application.applicationName,
        description: "CodeDeploy application of the proxy's deploys (aws deploy list-deployments)",
      },
      ProxyDeploymentGroup: {
        value: this.deploys.deploymentGroup.deploymentGroupName,
        description: "CodeDeploy deployment group of the proxy's deploys: traffic shifting and rollback",
      },
      DashboardUrl: {
        value: `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${this.dashboard.dashboard.dashboardName}`,
        description: "The stack's CloudWatch dashboard",
      },
      ProxyLogGroupName: { value: this.proxy.logGroup.logGroupName, description: 'Proxy Lambda log group' },
      CursorSecretArn: {
        value: this.proxy.cursorSecret.secretArn,
        description: 'Secrets Manager secret holding the cursor HMAC key (CURSOR_SECRET_ARN of the proxy)',
      },
      ...watchOutputs(this),
      ...(this.edge.webAcl
        ? {
            WebAclArn: {
              value: this.edge.webAcl.attrArn,
              description: 'AWS WAF web ACL of the distribution (rate limit per client IP)',
            },
          }
        : {}),
    };
    for (const [name, output] of Object.entries(outputs)) new CfnOutput(this, name, output);
  }
}

/**
 * The region the stack deploys to: its own when bound to one, else the CDK CLI's (`CDK_DEFAULT_REGION`: the
 * region an environment-agnostic stack is deployed to), else the CLI's own default, us-east-1.
 */
function homeRegion(stack: Stack): string {
  if (!Token.isUnresolved(stack.region)) return stack.region;
  return process.env.CDK_DEFAULT_REGION ?? 'us-east-1';
}
