/**
 * Safe deploys of the proxy: the version each deploy publishes, the `live` alias and its function URL behind
 * CloudFront (the distribution's invoke permissions on the alias), the CodeDeploy deployment group with its
 * traffic shift, its four alarms on the new version alone (named after it, so a failed version's alarm cannot
 * stop its fix), its post-traffic hook and its automatic rollback; every `proxyDeployment` value as CodeDeploy
 * names it.
 */
import { CustomResource, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProxyDeploys } from '../../infra/deploys.js';
import { PROXY_DEPLOYMENTS, type ProxyDeployment } from '../../infra/props.js';
import { allowedActions, distributionArn, logicalId, newApp, roleStatements, synth } from './helpers.js';

type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  [key: string]: unknown;
};

let template: Template;
let resources: Record<string, Resource>;
let ids: Record<
  | 'fn'
  | 'version'
  | 'alias'
  | 'url'
  | 'group'
  | 'errorRate'
  | 'runtime'
  | 'clientErrors'
  | 'p99'
  | 'distribution'
  | 'hook'
  | 'checkKey',
  string
>;

/** The logical id of the deploy alarm `name` of `stack` (its name ends with `-v<the version>`). */
function deployAlarm(all: Record<string, Resource>, stack: string, name: string): string {
  const found = Object.entries(all).filter(
    ([, r]) =>
      r.Type === 'AWS::CloudWatch::Alarm' &&
      JSON.stringify(r.Properties.AlarmName).startsWith(`{"Fn::Join":["",["${stack}-${name}-v",`),
  );
  if (found.length !== 1) throw new Error(`expected one alarm ${stack}-${name}-v…, found ${found.length}`);
  return found[0]![0];
}

beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
  resources = template.toJSON().Resources;
  const alarm = (name: string) => deployAlarm(resources, 'Catalogue', name);
  ids = {
    fn: logicalId(template, 'AWS::Lambda::Function', 'ProxyFunction'),
    version: logicalId(template, 'AWS::Lambda::Version', 'ProxyFunctionCurrentVersion'),
    alias: logicalId(template, 'AWS::Lambda::Alias', 'ProxyLive'),
    url: logicalId(template, 'AWS::Lambda::Url', 'ProxyLive'),
    group: logicalId(template, 'AWS::CodeDeploy::DeploymentGroup', 'DeploysGroup'),
    errorRate: alarm('proxy-new-version-5xx-rate'),
    runtime: alarm('proxy-new-version-runtime-errors'),
    clientErrors: alarm('proxy-new-version-4xx-rate'),
    p99: alarm('proxy-new-version-p99-duration'),
    distribution: logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
    hook: logicalId(template, 'AWS::Lambda::Function', 'DeploysHookFunction'),
    checkKey: logicalId(template, 'Custom::CatalogueCheckKey', 'ScheduledCheckKey'),
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
        AfterAllowTrafficHook: { Ref: ids.hook },
      },
    });
  });

  it('moves only once the alarms watch the new version and the check key the hook reads with is registered', () => {
    expect(resources[ids.alias]!.DependsOn).toEqual(
      expect.arrayContaining([ids.errorRate, ids.runtime, ids.clientErrors, ids.p99, ids.checkKey]),
    );
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
  it('shifts 10 % for 5 minutes by default, watches the four alarms and rolls back on failure, stop or alarm', () => {
    expect(resources[ids.group]!.Properties).toMatchObject({
      DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
      DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
      AlarmConfiguration: {
        Enabled: true,
        Alarms: [ids.errorRate, ids.runtime, ids.clientErrors, ids.p99].map((id) => ({ Name: { Ref: id } })),
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
    // Its one grant of its own: invoking the post-traffic hook.
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.Roles).includes(roleId),
    );
    expect(policies.map((p) => p.Properties.PolicyDocument.Statement)).toEqual([
      [
        {
          Action: 'lambda:InvokeFunction',
          Effect: 'Allow',
          Resource: [
            { 'Fn::GetAtt': [ids.hook, 'Arn'] },
            { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.hook, 'Arn'] }, ':*']] },
          ],
        },
      ],
    ]);
  });

  it.each(PROXY_DEPLOYMENTS)('%s is CodeDeploy’s configuration of that name', (deployment) => {
    const stack = new Stack(newApp({ bundle: false }), 'Deploys');
    const fn = new lambda.Function(stack, 'Fn', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = async () => ({});'),
    });
    const alias = new lambda.Alias(stack, 'Live', { aliasName: 'live', version: fn.currentVersion });
    const bucket = new s3.Bucket(stack, 'Bucket');
    new ProxyDeploys(stack, 'Deploys', {
      function: fn,
      alias,
      version: fn.currentVersion,
      deployment: deployment as ProxyDeployment,
      errorRateThresholdPercent: 5,
      p99DurationThresholdMs: 2000,
      newVersion4xxIncreasePercent: 20,
      hook: {
        targets: {
          apiUrl: 'https://x/v1',
          docsUrl: 'https://x/docs',
          adminUrl: 'https://a/v1',
          bucket,
          cataloguePrefix: '',
        },
        secret: new secretsmanager.Secret(stack, 'Key'),
        key: new CustomResource(stack, 'KeyResource', { serviceToken: fn.functionArn }),
        bakeMinutes: 5,
      },
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

  it("Lambda's own 5xx of the version: the larger of its function URL's 5xx and its errors, per URL request", () => {
    const alarm = resources[ids.runtime]!.Properties;

    expect(alarm).toMatchObject({
      Threshold: 5,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
    expect((alarm.Metrics as { Expression?: string }[]).find((m) => m.Expression)?.Expression).toBe(
      '100 * MAX([FILL(url5xx, 0), FILL(errors, 0)]) / requests',
    );
    for (const [id, metricName] of [
      ['url5xx', 'Url5xxCount'],
      ['errors', 'Errors'],
      ['requests', 'UrlRequestCount'],
    ] as const) {
      expect(metricOf(ids.runtime, id)).toEqual({ Metric: byVersion(metricName), Period: 60, Stat: 'Sum' });
    }
    // Nothing of the request lines: a version whose log line broke is still judged.
    expect(JSON.stringify(alarm)).not.toContain('latency_ms');
  });

  it("4xx share: the version's 4xx and 429 answers against the live version's (every other request of the alias)", () => {
    const alarm = resources[ids.clientErrors]!.Properties;
    const expression = (alarm.Metrics as { Expression?: string }[]).find((m) => m.Expression)?.Expression;

    expect(alarm).toMatchObject({
      Threshold: 20,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(expression).toBe(
      'IF(FILL(new, 0) >= 10 AND (FILL(all, 0) - FILL(new, 0)) >= 10, 100 * (FILL(n4xx, 0) + FILL(n429, 0)) / new - 100 * ((FILL(a4xx, 0) + FILL(a429, 0)) - (FILL(n4xx, 0) + FILL(n429, 0))) / (FILL(all, 0) - FILL(new, 0)), 0)',
    );
    const answers = (dimensions: object[]) => ({
      Metric: { Namespace: 'CatalogueReadApi/Catalogue', MetricName: 'latency_ms', Dimensions: dimensions },
      Period: 60,
      Stat: 'SampleCount',
    });
    expect(metricOf(ids.clientErrors, 'n4xx')).toEqual(
      answers([
        { Name: 'status_class', Value: '4xx' },
        { Name: 'version', Value: versionNumber() },
      ]),
    );
    expect(metricOf(ids.clientErrors, 'a429')).toEqual(answers([{ Name: 'status_class', Value: '429' }]));
    expect(metricOf(ids.clientErrors, 'new')).toEqual({
      Metric: byVersion('Invocations'),
      Period: 60,
      Stat: 'Sum',
    });
    const all = metricOf(ids.clientErrors, 'all').Metric as { Dimensions: { Name: string }[] };
    expect(all.Dimensions.map((d) => d.Name).sort()).toEqual(['FunctionName', 'Resource']);
  });

  it('are named after the version they watch: a new version makes new alarms, so a failed one cannot stop its fix', () => {
    for (const id of [ids.errorRate, ids.runtime, ids.clientErrors, ids.p99]) {
      expect(
        (resources[id]!.Properties.AlarmName as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1][1],
      ).toEqual(versionNumber());
    }
    // A change of the proxy (here its memory) publishes another version: every deploy alarm then names it.
    const changed = synth({ memorySize: 1024 }, 'Catalogue', { bundle: false }).template.toJSON()
      .Resources as Record<string, Resource>;
    const changedVersion = Object.keys(changed).find((id) => id.startsWith('ProxyFunctionCurrentVersion'))!;
    expect(changedVersion).not.toBe(ids.version);
    const name =
      changed[deployAlarm(changed, 'Catalogue', 'proxy-new-version-5xx-rate')]!.Properties.AlarmName;
    expect(name).toEqual({
      'Fn::Join': [
        '',
        ['Catalogue-proxy-new-version-5xx-rate-v', { 'Fn::GetAtt': [changedVersion, 'Version'] }],
      ],
    });
  });

  it('use the stack’s thresholds and the chosen traffic shift', () => {
    const other = synth(
      {
        errorRateThresholdPercent: 1,
        p99DurationThresholdMs: 800,
        newVersion4xxIncreasePercent: 7,
        proxyDeployment: 'AllAtOnce',
      },
      'Other',
      { bundle: false },
    ).template.toJSON().Resources as Record<string, Resource>;

    const threshold = (name: string) => other[deployAlarm(other, 'Other', name)]!.Properties.Threshold;
    expect(threshold('proxy-new-version-5xx-rate')).toBe(1);
    expect(threshold('proxy-new-version-runtime-errors')).toBe(1);
    expect(threshold('proxy-new-version-4xx-rate')).toBe(7);
    expect(threshold('proxy-new-version-p99-duration')).toBe(800);
    const group = Object.values(other).find((r) => r.Type === 'AWS::CodeDeploy::DeploymentGroup')!;
    expect(group.Properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaAllAtOnce');
  });
});

describe('the post-traffic hook', () => {
  it("is the check function's deployHook, given the four alarms to read and the bake", () => {
    const fn = resources[ids.hook]!.Properties as {
      Handler: string;
      Timeout: number;
      Environment: { Variables: Record<string, unknown> };
    };

    expect(fn.Handler).toBe('index.deployHook');
    expect(fn.Timeout).toBe(5 * 60 + 120);
    expect(fn.Environment.Variables.DEPLOY_BAKE_MINUTES).toBe('5');
    expect(fn.Environment.Variables.DEPLOY_ALARM_NAMES).toEqual({
      'Fn::Join': [
        '',
        [
          { Ref: ids.errorRate },
          ',',
          { Ref: ids.runtime },
          ',',
          { Ref: ids.clientErrors },
          ',',
          { Ref: ids.p99 },
        ],
      ],
    });
    for (const name of ['CHECK_API_URL', 'CHECK_KEY_SECRET_ARN', 'CHECK_CATALOGUE_URI', 'CHECK_ADMIN_URL']) {
      expect(fn.Environment.Variables[name], name).toBeDefined();
    }
  });

  it('may read those alarms and report to this deployment group, nothing more of CloudWatch or CodeDeploy', () => {
    const roleId = (resources[ids.hook]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
    const statements = roleStatements(template, roleId);
    const describe = statements.find((statement) => statement.Sid === 'ReadDeployAlarms')!;

    expect(describe.Action).toBe('cloudwatch:DescribeAlarms');
    const alarmArns = [ids.errorRate, ids.runtime, ids.clientErrors, ids.p99].map((id) => ({
      'Fn::GetAtt': [id, 'Arn'],
    }));
    expect(describe.Resource).toEqual(expect.arrayContaining(alarmArns));
    expect(describe.Resource).toHaveLength(4);
    const report = statements.find(
      (statement) => statement.Action === 'codedeploy:PutLifecycleEventHookExecutionStatus',
    )!;
    expect(JSON.stringify(report.Resource)).toContain(ids.group);
    expect(allowedActions(template, roleId).sort()).toEqual([
      'cloudwatch:DescribeAlarms',
      'codedeploy:PutLifecycleEventHookExecutionStatus',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      's3:GetObject',
      's3:ListBucket',
      'secretsmanager:GetSecretValue',
    ]);
  });

  it('is limited to 15 minutes with the longest bake, and the bake is refused beyond it', () => {
    const longest = synth({ deployBakeMinutes: 14 }, 'Long', { bundle: false }).template;
    longest.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.deployHook', Timeout: 900 });
    expect(() => synth({ deployBakeMinutes: 15 }, 'Longer', { bundle: false })).toThrow(
      'deployBakeMinutes must be an integer between 0 and 14 (got 15)',
    );
  });
});
