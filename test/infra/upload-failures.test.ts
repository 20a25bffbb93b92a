/**
 * No upload lost in silence (infra/upload-failures.ts): the upload builder's asynchronous invocations that fail
 * for good go to an SQS queue kept 14 days (encrypted, TLS only), whose first waiting message raises an alarm;
 * events Lambda drops raise another; both notify the alarm topic; the queue is an output.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, synth } from './helpers.js';

let template: Template;
let ids: { queue: string; builder: string; topic: string };
beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
  ids = {
    queue: logicalId(template, 'AWS::SQS::Queue', 'UploadFailuresQueue'),
    builder: logicalId(template, 'AWS::Lambda::Function', 'UploadsFunction'),
    topic: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic'),
  };
}, 120_000);

describe('the upload failure queue', () => {
  it("is the builder's on-failure destination, after its two retries and within 6 hours", () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ids.builder },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [ids.queue, 'Arn'] } } },
    });
  });

  it('keeps a message 14 days, encrypted, reachable over TLS only, and is output', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
    const policy = Object.values(template.findResources('AWS::SQS::QueuePolicy'))[0]!.Properties;
    expect(JSON.stringify(policy.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    template.hasOutput('UploadFailureQueueUrl', { Value: { Ref: ids.queue } });
    template.hasOutput('UploadFailureQueueArn', { Value: { 'Fn::GetAtt': [ids.queue, 'Arn'] } });
  });

  it('alarms on its first waiting message and on a dropped event, to the alarm topic', () => {
    const topic = [{ Ref: ids.topic }];
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-upload-failed-for-good',
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.queue, 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: topic,
      OKActions: topic,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-upload-events-dropped',
      Namespace: 'AWS/Lambda',
      MetricName: 'AsyncEventsDropped',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.builder } }],
      Statistic: 'Sum',
      Threshold: 1,
      AlarmActions: topic,
    });
  });
});
