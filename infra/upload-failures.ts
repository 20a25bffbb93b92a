/**
 * No upload lost in silence: where the upload builder's asynchronous invocations go when they fail for good (an
 * SQS queue, each message kept 14 days: the S3 event, the error and the attempts), and the two alarms that say
 * so — a message in that queue, and an event Lambda dropped without running it (too old, or its retries used
 * up while throttled). The failed uploads' own records and `npm run catalogue -- failed` / `retry` are the
 * builder's (docs/publishing.md); docs/operating.md shows how to read a message of the queue.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { runbookDescription } from './runbook.js';

export class UploadFailures extends Construct {
  /** The failed invocations' records (an on-failure destination's message each). */
  readonly queue: sqs.Queue;
  /** The upload builder's on-failure destination. */
  readonly destination: lambda.IDestination;
  /** A message is waiting in the queue: an upload failed for good. */
  readonly queueAlarm: cloudwatch.Alarm;
  #dropped: cloudwatch.Alarm | undefined;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the upload builder: its messages are read by an operator (aws sqs receive-message) and kept 14 days; there is nothing to move them to.',
    });
    this.destination = new destinations.SqsDestination(this.queue);
    const name = `${Stack.of(this).stackName}-upload-failed-for-good`;
    this.queueAlarm = this.queue
      .metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.MAXIMUM,
      })
      .createAlarm(this, 'Waiting', {
        alarmName: name,
        alarmDescription: runbookDescription(
          this,
          'upload-failed-for-good',
          'An invocation of the upload builder failed for good (its two retries failed too): its record (the S3 event of the upload, the error) waits in the upload failure queue, kept 14 days. Read it, fix the cause, send the upload again (npm run catalogue -- retry), then delete the message.',
        ),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
  }

  /** The alarm on events Lambda dropped for `fn` (too old, or out of retries while throttled). */
  watchDropped(fn: lambda.IFunction): cloudwatch.Alarm {
    this.#dropped ??= new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName: 'AsyncEventsDropped',
      dimensionsMap: { FunctionName: fn.functionName },
      statistic: cloudwatch.Stats.SUM,
      period: Duration.minutes(5),
    }).createAlarm(this, 'Dropped', {
      alarmName: `${Stack.of(this).stackName}-upload-events-dropped`,
      alarmDescription: runbookDescription(
        this,
        'upload-events-dropped',
        "Lambda dropped an upload's event without a successful build: it waited past the 6-hour maximum age (one upload at a time, the others queued behind a long or stuck one) or failed all its attempts. Dropped events that reach the on-failure destination are in the upload failure queue; list the uploads without a report and send them again.",
      ),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    return this.#dropped;
  }
}
