/**
 * CloudFront watched (infra/edge-alarms.ts): for an API stack in any region, a second stack bound to us-east-1,
 * where CloudFront's metrics are, holds the 5xx and 4xx error-rate alarms of the distribution, whose id it reads
 * from the API stack's output with Fn::GetStackOutput (in the API stack's region), deployed after it; each
 * alarm notifies the stack's own topic in us-east-1 (the alarm e-mail subscribed) and names its runbook.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CatalogueStack } from '../../infra/stack.js';
import { newApp } from './helpers.js';

let api: CatalogueStack;
let edge: Template;
beforeAll(() => {
  const app = newApp({ bundle: false });
  api = new CatalogueStack(app, 'Catalogue', {
    env: { region: 'eu-west-1' },
    alarmEmail: 'ops@example.com',
    edge4xxRateThresholdPercent: 40,
  });
  edge = Template.fromStack(api.edgeAlarms);
}, 120_000);

const distributionId = {
  'Fn::GetStackOutput': { StackName: 'Catalogue', OutputName: 'DistributionId', Region: 'eu-west-1' },
};

describe('the CloudFront alarms of an API stack in eu-west-1', () => {
  it('live in a stack of us-east-1, named after the API stack and its region, deployed after it', () => {
    expect(api.edgeAlarms.region).toBe('us-east-1');
    expect(api.edgeAlarms.stackName).toBe('Catalogue-edge-eu-west-1');
    expect(api.edgeAlarms.dependencies).toContain(api);
    expect(Template.fromStack(api).toJSON().Outputs.DistributionId).toBeDefined();
  });

  it.each([
    ['cloudfront-5xx-rate', '5xxErrorRate', 5],
    ['cloudfront-4xx-rate', '4xxErrorRate', 40],
  ])(
    '%s: the distribution’s %s above the threshold for 10 minutes, with enough requests, to the topic',
    (name, metricName, threshold) => {
      const alarms = Object.values(edge.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties);
      const alarm = alarms.find((a) => a.AlarmName === `Catalogue-${name}`)!;
      const topic = Object.keys(edge.findResources('AWS::SNS::Topic'))[0]!;

      expect(alarm).toMatchObject({
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topic }],
        OKActions: [{ Ref: topic }],
      });
      expect(alarm.AlarmDescription).toMatch(new RegExp(`Runbook: docs/operating\\.md#${name}$`));
      const metrics = alarm.Metrics as {
        Id: string;
        Expression?: string;
        MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown } };
      }[];
      expect(metrics.find((m) => m.Expression)?.Expression).toBe(
        'IF(FILL(requests, 0) >= 100, FILL(rate, 0), 0)',
      );
      expect(metrics.find((m) => m.Id === 'rate')!.MetricStat!.Metric).toEqual({
        Namespace: 'AWS/CloudFront',
        MetricName: metricName,
        Dimensions: [
          { Name: 'DistributionId', Value: distributionId },
          { Name: 'Region', Value: 'Global' },
        ],
      });
    },
  );

  it('mail the alarm address from their own topic, whose ARN is an output', () => {
    edge.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    const topic = Object.keys(edge.findResources('AWS::SNS::Topic'))[0]!;
    edge.hasOutput('EdgeAlarmTopicArn', { Value: { Ref: topic } });
  });

  it("take the CLI's region for an environment-agnostic API stack (CDK_DEFAULT_REGION)", () => {
    const saved = process.env.CDK_DEFAULT_REGION;
    process.env.CDK_DEFAULT_REGION = 'ap-southeast-2';
    try {
      const agnostic = new CatalogueStack(newApp({ bundle: false }), 'Agnostic');
      expect(agnostic.edgeAlarms.stackName).toBe('Agnostic-edge-ap-southeast-2');
      expect(JSON.stringify(Template.fromStack(agnostic.edgeAlarms).toJSON())).toContain(
        '"Region":"ap-southeast-2"',
      );
    } finally {
      if (saved === undefined) delete process.env.CDK_DEFAULT_REGION;
      else process.env.CDK_DEFAULT_REGION = saved;
    }
  });
});
