/**
 * Safe deploys of the proxy: the version each deploy publishes, the `live` alias and its function URL behind
 * CloudFront (the distribution's invoke permissions on the alias), the CodeDeploy deployment group with its
 * traffic shift, its two alarms on the new version alone and its automatic rollback; every `proxyDeployment`
 * value as CodeDeploy names it.
 */
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProxyDeploys } from '../../infra/deploys.js';
import { PROXY_DEPLOYMENTS, type ProxyDeployment } from '../../infra/props.js';
import { distributionArn, logicalId, newApp, synth } from './helpers.js';

type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  [key: string]: unknown;
};

let template: Template;
let resources: Record<string, Resource>;
let ids: Record<'fn' | 'version' | 'alias' | 'url' | 'group' | 'errorRate' | 'p99' | 'distribution', string>;

beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
  resources = template.toJSON().Resources;
  const alarm = (name: string) =>
    Object.entries(resources).find(([, r]) => r.Properties.AlarmName === `Catalogue-${name}`)![0];
  ids = {
    fn: logicalId(template, 'AWS::Lambda::Function', 'ProxyFunction'),
    version: logicalId(template, 'AWS::Lambda::Version', 'ProxyFunctionCurrentVersion'),
    alias: logicalId(template, 'AWS::Lambda::Alias', 'ProxyLive'),
    url: logicalId(template, 'AWS::Lambda::Url', 'ProxyLive'),
    group: logicalId(template, 'AWS::CodeDeploy::DeploymentGroup', 'DeploysGroup'),
    errorRate: alarm('proxy-new-version-5xx-rate'),
    p99: alarm('proxy-new-version-p99-duration'),
    distribution: logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
  };
});

const versionNumber = () => ({ 'Fn::GetAtt': [ids.version, 'Version'] });

describe('the live alias', () => {
  it('points at the version this deploy publishes, which is kept when the next one replaces it', () => {
    const alias = resources[ids.alias]!;
    const version = resources[ids.version]!;

    expect(alias.Properties).toEqual({
      Name: 'live',
      FunctionName: { Ref: ids.fn },
      FunctionVersion: versionNumber(),
    });
    expect(version.Properties.FunctionName).toEqual({ Ref: ids.fn });
    expect(version).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('is created on the first deploy on the first version (no routing to shift from); CodeDeploy moves it on updates', () => {
    const alias = resources[ids.alias]!;

    // CloudFormation applies an UpdatePolicy to updates only: creating the stack creates the alias on the
    // version, and nothing asks CodeDeploy to deploy.
    expect(alias.Properties.RoutingConfig).toBeUndefined();
    expect(alias.UpdatePolicy).toEqual({
      CodeDeployLambdaAliasUpdate: {
        ApplicationName: {
          Ref: logicalId(template, 'AWS::CodeDeploy::Application', 'DeploysGroupApplication'),
        },
        DeploymentGroupName: { Ref: ids.group },
      },
    });
  });

  it('moves only once the alarms watch the new version', () => {
    expect(resources[ids.alias]!.DependsOn).toEqual(expect.arrayContaining([ids.errorRate, ids.p99]));
  });
});

describe('the function URL behind CloudFront', () => {
  it('is the alias’s: AWS_IAM, streaming; the proxy function has no URL of its own', () => {
    expect(resources[ids.url]!.Properties).toEqual({
      AuthType: 'AWS_IAM',
      InvokeMode: 'RESPONSE_STREAM',
      Qualifier: 'live',
      TargetFunctionArn: { 'Fn::GetAtt': [ids.fn, 'Arn'] },
    });
    const proxyUrls = Object.values(template.findResources('AWS::Lambda::Url')).filter(
      (url) =>
        JSON.stringify(url.Properties.TargetFunctionArn) ===
        JSON.stringify({ 'Fn::GetAtt': [ids.fn, 'Arn'] }),
    );
    expect(proxyUrls).toHaveLength(1);
  });

  it('is the distribution’s origin, signed by its origin access control', () => {
    const config = resources[ids.distribution]!.Properties.DistributionConfig as {
      Origins: { DomainName: unknown; OriginAccessControlId: unknown }[];
    };
    const origin = config.Origins.find((o) => JSON.stringify(o.DomainName).includes(ids.url))!;

    expect(origin.DomainName).toEqual({
      'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': [ids.url, 'FunctionUrl'] }] }],
    });
    expect(origin.OriginAccessControlId).toEqual({
      'Fn::GetAtt': [
        logicalId(template, 'AWS::CloudFront::OriginAccessControl', 'EdgeOriginAccessControl'),
        'Id',
      ],
    });
  });

  it('may be invoked by this distribution only, on the alias (both permissions a URL needs)', () => {
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission'))
      .map((p) => p.Properties)
      .filter((p) => p.Principal === 'cloudfront.amazonaws.com');

    expect(permissions).toEqual(
      expect.arrayContaining([
        {
          Action: 'lambda:InvokeFunctionUrl',
          FunctionName: { 'Fn::GetAtt': [ids.url, 'FunctionArn'] },
          Principal: 'cloudfront.amazonaws.com',
          SourceArn: distributionArn(ids.distribution),
        },
        {
          Action: 'lambda:InvokeFunction',
          FunctionName: { 'Fn::GetAtt': [ids.url, 'FunctionArn'] },
          InvokedViaFunctionUrl: true,
          Principal: 'cloudfront.amazonaws.com',
          SourceArn: distributionArn(ids.distribution),
        },
      ]),
    );
    expect(permissions).toHaveLength(2);
  });
});

describe('the deployment group', () => {
  it('shifts 10 % for 5 minutes by default, watches the two alarms and rolls back on failure, stop or alarm', () => {
    expect(resources[ids.group]!.Properties).toMatchObject({
      DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
      DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
      AlarmConfiguration: {
        Enabled: true,
        Alarms: [{ Name: { Ref: ids.errorRate } }, { Name: { Ref: ids.p99 } }],
      },
      AutoRollbackConfiguration: {
        Enabled: true,
        Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
      },
    });
    template.hasOutput('ProxyDeploymentGroup', { Value: { Ref: ids.group } });
  });

  it('acts through a role only CodeDeploy assumes, with the policy AWS keeps for Lambda deployments', () => {
    const roleId = (resources[ids.group]!.Properties.ServiceRoleArn as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0]!;
    const role = resources[roleId]!.Properties;

    expect(role.AssumeRolePolicyDocument).toMatchObject({
      Statement: [
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'codedeploy.amazonaws.com' } },
      ],
    });
    expect(JSON.stringify(role.ManagedPolicyArns)).toContain(
      'service-role/AWSCodeDeployRoleForLambdaLimited',
    );
    expect(
      Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
        JSON.stringify(p.Properties.Roles).includes(roleId),
      ),
    ).toEqual([]);
  });

  it.each(PROXY_DEPLOYMENTS)('%s is CodeDeploy’s configuration of that name', (deployment) => {
    const stack = new Stack(newApp(), 'Deploys');
    const fn = new lambda.Function(stack, 'Fn', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = async () => ({});'),
    });
    const alias = new lambda.Alias(stack, 'Live', { aliasName: 'live', version: fn.currentVersion });
    new ProxyDeploys(stack, 'Deploys', {
      function: fn,
      alias,
      version: fn.currentVersion,
      deployment: deployment as ProxyDeployment,
      errorRateThresholdPercent: 5,
      p99DurationThresholdMs: 2000,
    });

    Template.fromStack(stack).hasResourceProperties('AWS::CodeDeploy::DeploymentGroup', {
      DeploymentConfigName: `CodeDeployDefault.Lambda${deployment}`,
    });
  });
});

describe("the new version's alarms", () => {
  /** The metric of id `id` in the math alarm `alarmId`. */
  const metricOf = (alarmId: string, id: string) =>
    (
      resources[alarmId]!.Properties.Metrics as {
        Id: string;
        MetricStat?: { Metric: unknown; Period: number; Stat: string };
      }[]
    ).find((m) => m.Id === id)!.MetricStat!;
  const byVersion = (metricName: string) => ({
    Namespace: 'AWS/Lambda',
    MetricName: metricName,
    Dimensions: expect.arrayContaining([
      { Name: 'FunctionName', Value: { Ref: ids.fn } },
      { Name: 'Resource', Value: { 'Fn::Join': ['', [{ Ref: ids.fn }, ':live']] } },
      { Name: 'ExecutedVersion', Value: versionNumber() },
    ]),
  });

  it('5xx rate: the version’s answered 5xx (its request lines’ metrics) and failed invocations, per invocation', () => {
    const alarm = resources[ids.errorRate]!.Properties;

    expect(alarm).toMatchObject({
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
    expect((alarm.Metrics as { Expression?: string }[]).find((m) => m.Expression)?.Expression).toBe(
      '100 * (FILL(answered, 0) + FILL(failed, 0)) / invocations',
    );
    expect(metricOf(ids.errorRate, 'answered')).toEqual({
      Metric: {
        Namespace: 'CatalogueReadApi/Catalogue',
        MetricName: 'latency_ms',
        Dimensions: expect.arrayContaining([
          { Name: 'version', Value: versionNumber() },
          { Name: 'status_class', Value: '5xx' },
        ]),
      },
      Period: 60,
      Stat: 'SampleCount',
    });
    expect(metricOf(ids.errorRate, 'failed')).toEqual({
      Metric: byVersion('Errors'),
      Period: 60,
      Stat: 'Sum',
    });
    expect(metricOf(ids.errorRate, 'invocations')).toEqual({
      Metric: byVersion('Invocations'),
      Period: 60,
      Stat: 'Sum',
    });
  });

  it('p99 duration of the version alone', () => {
    expect(resources[ids.p99]!.Properties).toMatchObject({
      ...byVersion('Duration'),
      ExtendedStatistic: 'p99',
      Period: 60,
      Threshold: 2000,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
  });

  it('use the stack’s thresholds and the chosen traffic shift', () => {
    const other = synth(
      { errorRateThresholdPercent: 1, p99DurationThresholdMs: 800, proxyDeployment: 'AllAtOnce' },
      'Other',
      { bundle: false },
    ).template;

    other.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Other-proxy-new-version-5xx-rate',
      Threshold: 1,
    });
    other.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Other-proxy-new-version-p99-duration',
      Threshold: 800,
    });
    other.hasResourceProperties('AWS::CodeDeploy::DeploymentGroup', {
      DeploymentConfigName: 'CodeDeployDefault.LambdaAllAtOnce',
    });
  });
});
