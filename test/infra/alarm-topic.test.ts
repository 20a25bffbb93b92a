/**
 * Alarms reach a person (infra/alarm-topic.ts): one topic per stack that every alarm notifies, of ALARM and of
 * OK, by default (no setting needed), its ARN an output; `alarmEmail` subscribes an address; an alarm added
 * later by any construct of the stack gets the action too.
 */
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { beforeAll, describe, expect, it } from 'vitest';
import { AlarmTopic } from '../../infra/alarm-topic.js';
import { logicalId, newApp, synth } from './helpers.js';

let template: Template;
beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
}, 120_000);

describe('the alarm topic', () => {
  it('is notified by every alarm of the stack, of ALARM and OK, without alarmEmail; its ARN is an output', () => {
    const topic = { Ref: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic') };
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));

    expect(alarms.length).toBeGreaterThanOrEqual(15);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions, alarm.Properties.AlarmName).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
    }
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    template.hasOutput('AlarmTopicArn', { Value: topic });
  });

  it('subscribes alarmEmail', () => {
    const mailed = synth({ alarmEmail: 'ops@example.com' }, 'Mailed', { bundle: false }).template;
    mailed.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: logicalId(mailed, 'AWS::SNS::Topic', 'AlarmTopic') },
    });
  });

  it('reaches an alarm made after it, by any construct of the stack', () => {
    const stack = new Stack(newApp({ bundle: false }), 'Later');
    new AlarmTopic(stack, 'Topic');
    new cloudwatch.Metric({ namespace: 'N', metricName: 'M' }).createAlarm(stack, 'Late', {
      threshold: 1,
      evaluationPeriods: 1,
    });

    const alarm = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm'))[0]!;
    expect(alarm.Properties.AlarmActions).toHaveLength(1);
    expect(alarm.Properties.OKActions).toHaveLength(1);
  });
});
