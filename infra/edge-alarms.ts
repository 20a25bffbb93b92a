/**
 * CloudFront watched (docs/operating.md, "The CloudFront alarms"): the distribution's 5xx and 4xx error rates,
 * alarmed. CloudFront publishes its metrics in us-east-1 only, and an alarm watches metrics of its own region,
 * so these alarms live in a small second stack bound to us-east-1 (`<stack>-edge-<region>`), whatever the API
 * stack's region. It reads the distribution's id from the API stack's `DistributionId` output with
 * CloudFormation's `Fn::GetStackOutput` (cross-region: what CDK's weak cross-region references emit), so it is
 * deployed after the API stack (`npm run deploy` deploys both, in that order), and its alarms notify a topic of
 * its own in us-east-1 (CloudWatch publishes only to a topic of the alarm's region), with `alarmEmail` subscribed.
 *
 * No traffic-drop alarm: the scheduled check (infra/scheduled-check.ts) is that signal. It sends requests
 * through the same public name every minute and fires when they fail or stop, whatever the consumers' volume:
 * a DNS or certificate mistake, a disabled distribution or a broken viewer function fail it within minutes. A
 * drop in consumers' requests with a healthy front door is theirs (a batch that ended, a holiday), and an
 * anomaly band on a few partners' irregular traffic would page on those; what the check cannot see — a failure
 * only some networks meet — shows in these error rates and in the consumers' reports.
 */
import { CfnOutput, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { AlarmTopic } from './alarm-topic.js';
import { runbookDescription, useRunbook } from './runbook.js';

/** The region of CloudFront's metrics (and of these alarms). */
export const CLOUDFRONT_METRICS_REGION = 'us-east-1';
/** Requests in 5 minutes below which the rates are not judged (a few requests make any rate). */
export const MIN_EDGE_REQUESTS = 100;
const PERIOD = Duration.minutes(5);

export interface EdgeAlarmsStackProps extends StackProps {
  /** The API stack's name: its `DistributionId` output is read. */
  readonly apiStackName: string;
  /** The API stack's region. */
  readonly apiRegion: string;
  readonly alarmEmail?: string | undefined;
  /** The 5xx rate (%) that raises the 5xx alarm (`errorRateThresholdPercent`). */
  readonly errorRateThresholdPercent: number;
  /** The 4xx rate (%) that raises the 4xx alarm (`edge4xxRateThresholdPercent`). */
  readonly edge4xxRateThresholdPercent: number;
  readonly runbookUrl: string;
}

export class EdgeAlarmsStack extends Stack {
  readonly topic: AlarmTopic;
  readonly errorRate5xx: cloudwatch.Alarm;
  readonly errorRate4xx: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: EdgeAlarmsStackProps) {
    super(scope, id, {
      ...props,
      env: { ...props.env, region: CLOUDFRONT_METRICS_REGION },
      stackName: `${props.apiStackName}-edge-${props.apiRegion}`,
      description: `Catalogue Read API: the CloudFront alarms of ${props.apiStackName} (${props.apiRegion}), in the region of CloudFront's metrics`,
    });
    useRunbook(this, props.runbookUrl);
    this.topic = new AlarmTopic(this, 'Alarms', { alarmEmail: props.alarmEmail });
    const distributionId = Fn.getStackOutput(props.apiStackName, 'DistributionId', props.apiRegion);
    const metric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/CloudFront',
        metricName,
        dimensionsMap: { DistributionId: distributionId, Region: 'Global' },
        statistic,
        period: PERIOD,
      });
    const rate = (metricName: string) =>
      new cloudwatch.MathExpression({
        expression: `IF(FILL(requests, 0) >= ${MIN_EDGE_REQUESTS}, FILL(rate, 0), 0)`,
        usingMetrics: {
          rate: metric(metricName, cloudwatch.Stats.AVERAGE),
          requests: metric('Requests', cloudwatch.Stats.SUM),
        },
        label: `CloudFront ${metricName} (%)`,
        period: PERIOD,
      });
    const alarm = (id: string, name: string, metricName: string, threshold: number, text: string) =>
      rate(metricName).createAlarm(this, id, {
        alarmName: `${props.apiStackName}-${name}`,
        alarmDescription: runbookDescription(this, name, text),
        threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    this.errorRate5xx = alarm(
      'Edge5xxRate',
      'cloudfront-5xx-rate',
      '5xxErrorRate',
      props.errorRateThresholdPercent,
      `More than the threshold percentage of the distribution's requests (${props.apiRegion} API) were answered 5xx at the edge for 10 minutes, with at least ${MIN_EDGE_REQUESTS} requests in each 5: the proxy's own 5xx, or CloudFront failing to reach it (the origin's permission, the function URL, a timeout). Compare with the proxy's 5xx alarm in the API's region.`,
    );
    this.errorRate4xx = alarm(
      'Edge4xxRate',
      'cloudfront-4xx-rate',
      '4xxErrorRate',
      props.edge4xxRateThresholdPercent,
      `More than the threshold percentage of the distribution's requests (${props.apiRegion} API) were answered 4xx for 10 minutes, with at least ${MIN_EDGE_REQUESTS} requests in each 5: every consumer refused (403 from a lost invoke permission or origin access control, 401 from a broken viewer function or key lookup), or a flood of bad requests.`,
    );
    new CfnOutput(this, 'EdgeAlarmTopicArn', {
      value: this.topic.topic.topicArn,
      description: "SNS topic of the CloudFront alarms (us-east-1): subscribe what the API stack's topic has",
    });
  }
}
