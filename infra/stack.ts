/**
 * The Catalogue Read API in one stack: storage, the proxy Lambda and its safe deploys, the CloudFront edge,
 * alarms, the dashboard, the publisher role, the admin API and the upload builder. Settings and their
 * defaults: `props.ts`; CDK context names: `context.ts`.
 */
import { Stack, Token } from 'aws-cdk-lib';
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
import { addOutputs } from './outputs.js';
import { type CatalogueStackProps, type ResolvedProps, resolveProps } from './props.js';
import { ProxyFunction } from './proxy-function.js';
import { PublisherRole } from './publisher.js';
import { ApiReference } from './reference.js';
import { useRunbook } from './runbook.js';
import { ScheduledCheck } from './scheduled-check.js';
import { Storage } from './storage.js';
import { UploadBuilder } from './upload-builder.js';
import { UploadFailures } from './upload-failures.js';

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

  constructor(scope: Construct, id: string, props: CatalogueStackProps = {}) {
    // Validate before anything is created, so a bad setting fails with its own message.
    const settings = resolveProps(props);
    super(scope, id, {
      description: 'Catalogue Read API: key-authenticated read API over precomputed catalogue objects',
      ...props,
    });
    this.settings = settings;
    useRunbook(this, settings.runbookUrl);
    this.alarmTopic = new AlarmTopic(this, 'AlarmTopic', { alarmEmail: settings.alarmEmail });

    const served = serve(this, settings);
    this.storage = served.storage;
    this.proxy = served.proxy;
    this.edge = served.edge;
    this.reference = served.reference;

    const published = publish(this, settings, served.storage);
    this.publisher = published.publisher;
    this.admin = published.admin;
    this.uploadFailures = published.uploadFailures;
    this.uploads = published.uploads;
    this.logMetrics = published.logMetrics;

    const watched = watch(this, settings, { ...served, ...published });
    this.scheduledCheck = watched.scheduledCheck;
    this.deploys = watched.deploys;
    this.alarms = watched.alarms;
    // CloudFront's metrics are in us-east-1: its alarms are a stack there (infra/edge-alarms.ts).
    this.edgeAlarms = new EdgeAlarmsStack(scope, `${id}EdgeAlarms`, {
      apiStackName: this.stackName,
      apiRegion: homeRegion(this),
      alarmEmail: settings.alarmEmail,
      errorRateThresholdPercent: settings.errorRateThresholdPercent,
      edge4xxRateThresholdPercent: settings.edge4xxRateThresholdPercent,
      runbookUrl: settings.runbookUrl,
      ...(props.tags && { tags: props.tags }),
    });
    this.edgeAlarms.addStackDependency(this, 'reads the DistributionId output');

    const { keysTable, countersTable } = this.storage;
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
      reservedConcurrency: settings.reservedConcurrency,
    });
    addOutputs(this);
  }
}

/** The read path: storage, the proxy Lambda, the CloudFront edge and the API reference page behind it. */
function serve(stack: Stack, s: ResolvedProps) {
  const storage = new Storage(stack, 'Storage', {
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
  const { bucket, keysTable, countersTable, logBucket } = storage;
  const proxy = new ProxyFunction(stack, 'Proxy', {
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
  const edge = new Edge(stack, 'Edge', {
    functionUrl: proxy.functionUrl,
    logBucket,
    domainName: s.domainName,
    certificateArn: s.certificateArn,
    webAclArn: s.webAclArn,
    wafRateLimitPer5Min: s.wafRateLimitPer5Min,
    priceClass: s.priceClass,
  });
  // The API reference page at /docs, built from proxy/openapi.json at synth (cached between synths).
  const reference = new ApiReference(stack, 'Reference', {
    site: buildReferenceSync(),
    bucket,
    distribution: edge.distribution,
    logRetentionDays: s.logRetentionDays,
  });
  return { storage, proxy, edge, reference };
}

/** The publisher's side: the publisher role, the admin API and the upload builder, and their log metrics. */
function publish(stack: Stack, s: ResolvedProps, { bucket, keysTable, countersTable }: Storage) {
  const publisher = new PublisherRole(stack, 'Publisher', {
    bucket,
    cataloguePrefix: s.cataloguePrefix,
    principalArn: s.publisherPrincipalArn,
  });
  // The key-administration API: its own IAM-authenticated function URL, no route from the distribution.
  const admin = new AdminApi(stack, 'Admin', {
    keysTable,
    countersTable,
    maxKeysPerOwner: s.adminMaxKeysPerOwner,
    keyCacheTtlMs: s.keyCacheTtlMs,
    logRetentionDays: s.adminLogRetentionDays,
    removalPolicy: s.removalPolicy,
  });
  const uploadFailures = new UploadFailures(stack, 'UploadFailures');
  // Publishing by upload: the builder in the bucket's region, triggered by a completed snapshot upload.
  const uploads = new UploadBuilder(stack, 'Uploads', {
    bucket,
    cataloguePrefix: s.cataloguePrefix,
    incomingPrefix: s.incomingPrefix,
    reportsPrefix: s.reportsPrefix,
    memorySize: s.uploadBuilderMemorySize,
    timeoutSeconds: s.uploadBuilderTimeoutSeconds,
    logRetentionDays: s.logRetentionDays,
    removalPolicy: s.removalPolicy,
    onFailure: uploadFailures.destination,
  });
  uploadFailures.watchDropped(uploads.function);
  const logMetrics = new LogMetrics(stack, 'LogMetrics', {
    adminLogGroup: admin.logGroup,
    uploadLogGroup: uploads.logGroup,
  });
  return { publisher, admin, uploadFailures, uploads, logMetrics };
}

/** What watches the running stack: the scheduled check, the proxy's safe deploys and the alarms. */
function watch(stack: Stack, s: ResolvedProps, made: ReturnType<typeof serve> & ReturnType<typeof publish>) {
  const { storage, proxy, edge, admin, logMetrics } = made;
  const { bucket, keysTable, countersTable } = storage;
  // The smoke checks from outside, every scheduledCheckMinutes, through the public name (infra/scheduled-check.ts).
  const publicOrigin = `https://${s.domainName ?? edge.distribution.distributionDomainName}`;
  const checkTargets = {
    apiUrl: `${publicOrigin}/v1`,
    docsUrl: `${publicOrigin}/docs`,
    adminUrl: `${admin.functionUrl.url}v1`,
    bucket,
    cataloguePrefix: s.cataloguePrefix,
  };
  const scheduledCheck = new ScheduledCheck(stack, 'ScheduledCheck', {
    ...checkTargets,
    keysTable,
    countersTable,
    minutes: s.scheduledCheckMinutes,
    keyGeneration: s.checkKeyGeneration,
    logRetentionDays: s.logRetentionDays,
    removalPolicy: s.removalPolicy,
  });
  // Each deploy of the proxy moves traffic to its new version as proxyDeployment says (infra/deploys.ts).
  const deploys = new ProxyDeploys(stack, 'Deploys', {
    function: proxy.function,
    alias: proxy.alias,
    version: proxy.version,
    deployment: s.proxyDeployment,
    errorRateThresholdPercent: s.errorRateThresholdPercent,
    p99DurationThresholdMs: s.p99DurationThresholdMs,
    newVersion4xxIncreasePercent: s.newVersion4xxIncreasePercent,
    hook: {
      targets: checkTargets,
      secret: scheduledCheck.secret,
      key: scheduledCheck.key,
      bakeMinutes: s.deployBakeMinutes,
      logRetentionDays: s.logRetentionDays,
    },
  });
  const alarms = new Alarms(stack, 'Alarms', {
    proxy: proxy.function,
    keysTable,
    countersTable,
    errorRateThresholdPercent: s.errorRateThresholdPercent,
    p99DurationThresholdMs: s.p99DurationThresholdMs,
    proxyLogGroup: proxy.logGroup,
    unauthorizedPerMinuteThreshold: s.unauthorizedPerMinuteThreshold,
    admin: admin.function,
    logMetrics,
  });
  return { scheduledCheck, deploys, alarms };
}

/**
 * The region the stack deploys to: its own when bound to one, else the CDK CLI's (`CDK_DEFAULT_REGION`: the
 * region an environment-agnostic stack is deployed to), else the CLI's own default, us-east-1.
 */
function homeRegion(stack: Stack): string {
  if (!Token.isUnresolved(stack.region)) return stack.region;
  return process.env.CDK_DEFAULT_REGION ?? 'us-east-1';
}
