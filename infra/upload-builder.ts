/**
 * Publishing by upload (docs/design.md#the-publishers-application): the builder as a Lambda function in the bucket's region, triggered by
 * every snapshot archive completed under the incoming prefix (a PUT, or the completion of a multipart upload:
 * S3 sends ObjectCreated only for a whole object), its least-privilege role and log group, the alarm on a
 * failed build, and the one policy the publisher's application needs: upload, and read its reports.
 *
 * Why Lambda (measured, bench/README.md section 11): a full build of 100,000 modules needs ~1.5 GB and a
 * few CPU-minutes, well inside 15 minutes and 10 GB; it keeps nothing on disk (the archive is read in memory).
 * Reserved concurrency 1 runs one upload at a time (the publish lock holds the target anyway, also against a
 * CLI publish); further events wait in Lambda's asynchronous queue (throttled events are retried for up to
 * the maximum event age), and a failed one is retried twice.
 */
import { fileURLToPath } from 'node:url';
import { Arn, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import { Construct } from 'constructs';
import { bundledFunction } from './bundling.js';
import { ownLogsAndRole } from './function-role.js';
import { prefixWildcardFinding } from './nag.js';
import { runbookDescription } from './runbook.js';

/**
 * The EventBridge `source` of the builder's events: builder/upload/report.ts EVENT_SOURCE (infra imports no
 * product code; test/infra/stack.test.ts checks that the two agree).
 */
export const UPLOAD_EVENT_SOURCE = 'catalogue-read-api.builder';

/** The upload builder's Lambda entry point (exports `handler`: lambda.ts's, its errors' stacks source-mapped). */
export const UPLOAD_BUILDER_ENTRY = fileURLToPath(new URL('../builder/lambda-entry.ts', import.meta.url));

export interface UploadBuilderProps {
  readonly bucket: s3.Bucket;
  /** Key prefix of the published catalogue: `''` or ending in `/`. */
  readonly cataloguePrefix: string;
  /** Where snapshots are uploaded (`<prefix><name>.tar.gz`). */
  readonly incomingPrefix: string;
  /** Where the builder writes a report per upload (`<prefix><name>.json`). */
  readonly reportsPrefix: string;
  /**
   * Memory in MB (CPU scales with it: one vCPU at 1,769 MB).
   * @default 3008
   */
  readonly memorySize?: number;
  /**
   * Timeout in seconds.
   * @default 900
   */
  readonly timeoutSeconds?: number;
  /**
   * Log retention in days.
   * @default 30
   */
  readonly logRetentionDays?: number;
  /**
   * Removal policy of the log group.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Where an invocation that failed for good goes (infra/upload-failures.ts).
   * @default - nowhere: Lambda drops it after its retries
   */
  readonly onFailure?: lambda.IDestination;
}

/** Days an upload stays in the incoming prefix (the builder orders uploads by what is there), and a report. */
const INCOMING_DAYS = 7;
const REPORT_DAYS = 90;
/** Seconds kept for the build when an upload waits for another publish to release the target. */
const BUILD_BUDGET_SECONDS = 600;

export class UploadBuilder extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** A build that failed (its invocation errored: a store fault, a timeout, a crash). */
  readonly failureAlarm: cloudwatch.Alarm;
  /** What the publisher's application attaches to its own role or user: upload, read reports. */
  readonly uploadPolicy: iam.ManagedPolicy;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a CDK constructor: the uploads bucket, its function, trigger and policies declared in order (test/layout/functions.test.ts names it)
  constructor(scope: Construct, id: string, props: UploadBuilderProps) {
    super(scope, id);
    const { bucket, cataloguePrefix, incomingPrefix, reportsPrefix } = props;
    const stack = Stack.of(this);

    ({ logGroup: this.logGroup, role: this.role } = ownLogsAndRole(this, {
      description: 'Catalogue Read API upload builder: read uploads, publish the catalogue, write reports',
      logRetentionDays: props.logRetentionDays,
      removalPolicy: props.removalPolicy,
    }));
    const allow = (sid: string, actions: string[], resources: string[], conditions?: iam.Conditions) =>
      this.role.addToPolicy(
        new iam.PolicyStatement({ sid, actions, resources, ...(conditions && { conditions }) }),
      );
    allow('ReadUploads', ['s3:GetObject'], [bucket.arnForObjects(`${incomingPrefix}*`)]);
    // A report is read before it is written (written once: a retry finds it and sends its event again).
    allow('WriteReports', ['s3:PutObject', 's3:GetObject'], [bucket.arnForObjects(`${reportsPrefix}*`)]);
    // What the CLI's publisher role may do, no more: the same publish code runs here.
    allow(
      'PublishCatalogue',
      ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
      [bucket.arnForObjects(`${cataloguePrefix}*`)],
    );
    // Listing the reports prefix too: without it, reading a report that is not there yet is 403, not 404.
    allow('ListUploadsAndCatalogue', ['s3:ListBucket'], [bucket.bucketArn], {
      StringLike: { 's3:prefix': [`${incomingPrefix}*`, `${cataloguePrefix}*`, `${reportsPrefix}*`] },
    });
    allow(
      'SendUploadEvents',
      ['events:PutEvents'],
      [Arn.format({ service: 'events', resource: 'event-bus', resourceName: 'default' }, stack)],
    );
    const acknowledge = (finding: string, reason: string) =>
      Validations.of(this.role).acknowledge({ id: finding, reason });
    acknowledge(
      prefixWildcardFinding(bucket, cataloguePrefix),
      'The builder publishes content-addressed objects whose keys are hashes known only at publish time, as the publisher role does: writes are granted on the catalogue prefix only.',
    );
    acknowledge(
      prefixWildcardFinding(bucket, incomingPrefix),
      'Uploads are named by the publisher (a timestamp or CI run per upload), so the builder reads any object under the incoming prefix and nothing else.',
    );
    acknowledge(
      prefixWildcardFinding(bucket, reportsPrefix),
      'The builder writes one report per upload, named after the upload, under the reports prefix and nowhere else (and reads it first, to write it only once).',
    );

    this.function = new NodejsFunction(this, 'Function', {
      // Everything bundled, the AWS SDK included: the builder runs the exact client versions it is tested
      // with, not the runtime's.
      ...bundledFunction(this, { fn: 'upload-builder', entry: UPLOAD_BUILDER_ENTRY }),
      description: 'Catalogue Read API upload builder: validate and publish an uploaded snapshot',
      memorySize: props.memorySize ?? 3008,
      timeout: Duration.seconds(props.timeoutSeconds ?? 900),
      // One upload at a time; others wait in the asynchronous queue (the publish lock holds the target too).
      reservedConcurrentExecutions: 1,
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        CATALOGUE_BUCKET: bucket.bucketName,
        CATALOGUE_PREFIX: cataloguePrefix,
        INCOMING_PREFIX: incomingPrefix,
        REPORTS_PREFIX: reportsPrefix,
        EVENT_BUS_NAME: 'default',
        BUILD_BUDGET_SECONDS: String(Math.min(BUILD_BUDGET_SECONDS, (props.timeoutSeconds ?? 900) - 60)),
        // No --enable-source-maps: Node would parse the map at every cold start (+357 ms, +8.3 MB, bench
        // section 11); the entry maps a failed invocation's stack through it then (builder/report/stacks.ts).
      },
    });
    // Throttled events (one upload at a time) wait up to the maximum age; a failed build is tried twice more.
    this.function.configureAsyncInvoke({
      maxEventAge: Duration.hours(6),
      retryAttempts: 2,
      ...(props.onFailure && { onFailure: props.onFailure }),
    });

    // Only whole objects: S3 sends ObjectCreated for a completed PUT or multipart upload, never for a part.
    bucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.LambdaDestination(this.function), {
      prefix: incomingPrefix,
      suffix: '.tar.gz',
    });
    bucket.addLifecycleRule({
      id: 'expire-uploads',
      prefix: incomingPrefix,
      expiration: Duration.days(INCOMING_DAYS),
    });
    bucket.addLifecycleRule({
      id: 'expire-reports',
      prefix: reportsPrefix,
      expiration: Duration.days(REPORT_DAYS),
    });

    this.failureAlarm = this.function
      .metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM })
      .createAlarm(this, 'Failures', {
        alarmName: `${stack.stackName}-upload-build-failed`,
        alarmDescription: runbookDescription(
          this,
          'upload-build-failed',
          'An invocation of the upload builder failed, and Lambda tries it again twice: an upload could not be published (a store fault, the publish lock held too long, a timeout or a crash: its report says failed, the live version is unchanged), or an outcome event could not be sent to EventBridge (the report stands; the retry sends the same event), or a record was not an upload of this bucket (a key outside the incoming prefix, another bucket, not an S3 event). The builder log group says which, one line each. An invalid snapshot, however bad, does not raise this: its report and event list its problems.',
        ),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

    this.uploadPolicy = new iam.ManagedPolicy(this, 'UploadPolicy', {
      description:
        'Catalogue Read API: upload a snapshot (incoming prefix) and read the reports of uploads; nothing else',
      statements: [
        new iam.PolicyStatement({
          sid: 'UploadSnapshots',
          // PutObject covers the parts of a multipart upload (aws s3 cp over 8 MB); abort lets a failed one clean up.
          actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
          resources: [bucket.arnForObjects(`${incomingPrefix}*.tar.gz`)],
        }),
        new iam.PolicyStatement({
          sid: 'ReadReports',
          actions: ['s3:GetObject'],
          resources: [bucket.arnForObjects(`${reportsPrefix}*`)],
        }),
      ],
    });
    Validations.of(this.uploadPolicy).acknowledge({
      id: prefixWildcardFinding(bucket, reportsPrefix),
      reason:
        'A publisher reads the report of each of its uploads, named after the upload; reports hold no catalogue data beyond counts and problems.',
    });
    Validations.of(this.uploadPolicy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.resolve((bucket.node.defaultChild as s3.CfnBucket).logicalId)}.Arn>/${incomingPrefix}*.tar.gz]`,
      reason:
        'Uploads are named by the publisher (a timestamp or CI run each), so any .tar.gz under the incoming prefix may be written; nothing else in the bucket.',
    });
    this.#acknowledgeNotificationHandler();
  }

  /** cdk-nag findings of CDK's bucket-notifications handler (one per stack), which runs only during deployments. */
  #acknowledgeNotificationHandler(): void {
    const stack = Stack.of(this);
    const handler = stack.node.children.find((child) =>
      child.node.id.startsWith('BucketNotificationsHandler'),
    );
    if (!handler) throw new Error('the bucket notifications handler was not found');
    const why = (id: string, reason: string) => Validations.of(handler).acknowledge({ id, reason });
    why(
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "CDK's bucket-notifications handler logs with the AWS managed basic execution policy (CloudWatch Logs only); it is aws-cdk-lib's own construct and runs only while CloudFormation deploys the stack.",
    );
    why(
      'AwsSolutions-IAM5[Resource::*]',
      "s3:PutBucketNotification is granted on * by aws-cdk-lib's notifications handler (it configures the bucket's notifications once per deployment); it runs only during deployments.",
    );
  }
}
