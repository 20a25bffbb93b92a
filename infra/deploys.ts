/**
 * Safe deploys of the proxy (docs/operating.md, "Safe deploys"): each deploy publishes a version
 * (infra/proxy-function.ts) and CodeDeploy moves the `live` alias, which the distribution reaches, from the
 * previous version to it as `proxyDeployment` says (10 % for 5 minutes, then all, by default), watching two
 * alarms on the new version alone: its 5xx rate and its p99 duration. Either one in ALARM before the traffic
 * has moved stops the deployment and moves every request back to the previous version; the stack update then
 * fails and CloudFormation rolls it back. The first deploy creates the alias on the first version: there is
 * nothing to shift from, so CodeDeploy does not run.
 *
 * The admin function and the upload builder are deployed at once, on purpose (docs/operating.md says why): their
 * traffic is too thin for a canary's alarms to judge, and their failures leave the catalogue served.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { ProxyDeployment } from './props.js';
import { requestMetric } from './request-metrics.js';

/** CodeDeploy's predefined configuration of each `proxyDeployment` value. */
const CONFIGS: Record<ProxyDeployment, codedeploy.ILambdaDeploymentConfig> = {
  Canary10Percent5Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  Canary10Percent10Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
  Canary10Percent15Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
  Canary10Percent30Minutes: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
  Linear10PercentEvery1Minute: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  Linear10PercentEvery2Minutes: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
  Linear10PercentEvery3Minutes: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
  Linear10PercentEvery10Minutes: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
  AllAtOnce: codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE,
};

/**
 * One-minute periods, two of the last three breaching: a canary of 5 minutes sees its first data within a
 * minute or two and can stop on the third; one bad minute (a DynamoDB blip) does not roll a deploy back.
 */
const PERIOD = Duration.minutes(1);
const EVALUATION = { evaluationPeriods: 3, datapointsToAlarm: 2 } as const;

export interface ProxyDeploysProps {
  readonly function: lambda.IFunction;
  readonly alias: lambda.Alias;
  /** The version this deploy publishes: the alarms watch it alone. */
  readonly version: lambda.IVersion;
  readonly deployment: ProxyDeployment;
  /** The 5xx rate (%) of the new version's requests that stops a deploy (`errorRateThresholdPercent`). */
  readonly errorRateThresholdPercent: number;
  /** The p99 duration (ms) of the new version that stops a deploy (`p99DurationThresholdMs`). */
  readonly p99DurationThresholdMs: number;
}

export class ProxyDeploys extends Construct {
  readonly deploymentGroup: codedeploy.LambdaDeploymentGroup;
  /** The new version's 5xx rate: answered 5xx (its request lines' metrics) and failed invocations. */
  readonly newVersionErrorRate: cloudwatch.Alarm;
  readonly newVersionP99Duration: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: ProxyDeploysProps) {
    super(scope, id);
    const prefix = Stack.of(this).stackName;
    const version = props.version.version;
    // Lambda's metrics of the versions an alias runs: Resource is the alias, ExecutedVersion the version.
    const lambdaMetric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Lambda',
        metricName,
        dimensionsMap: {
          FunctionName: props.function.functionName,
          Resource: `${props.function.functionName}:${props.alias.aliasName}`,
          ExecutedVersion: version,
        },
        statistic,
        period: PERIOD,
      });

    // Answered 5xx (a dependency failing, a configuration the version cannot use) are in the request lines'
    // metrics by version; crashes and timeouts write no request line and are Lambda's Errors.
    this.newVersionErrorRate = new cloudwatch.MathExpression({
      expression: '100 * (FILL(answered, 0) + FILL(failed, 0)) / invocations',
      usingMetrics: {
        answered: requestMetric(this, { version, status_class: '5xx' }, cloudwatch.Stats.SAMPLE_COUNT, {
          period: PERIOD,
        }),
        failed: lambdaMetric('Errors', cloudwatch.Stats.SUM),
        invocations: lambdaMetric('Invocations', cloudwatch.Stats.SUM),
      },
      label: 'New proxy version: 5xx rate (%)',
      period: PERIOD,
    }).createAlarm(this, 'NewVersionErrorRate', {
      alarmName: `${prefix}-proxy-new-version-5xx-rate`,
      alarmDescription:
        "The proxy version this deploy published answered more than the threshold percentage of its requests with a 5xx (or failed them) in two of three minutes. While CodeDeploy moves traffic to it, this stops the deploy and moves every request back to the previous version; CloudFormation then rolls the stack back. Read that version's 5xx log lines (filter version = the number) for the error code.",
      threshold: props.errorRateThresholdPercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      ...EVALUATION,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.newVersionP99Duration = lambdaMetric('Duration', cloudwatch.Stats.p(99)).createAlarm(
      this,
      'NewVersionP99Duration',
      {
        alarmName: `${prefix}-proxy-new-version-p99-duration`,
        alarmDescription:
          'The slowest 1% of the invocations of the proxy version this deploy published took longer than the threshold in two of three minutes. While CodeDeploy moves traffic to it, this stops the deploy and moves every request back to the previous version; CloudFormation then rolls the stack back.',
        threshold: props.p99DurationThresholdMs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        ...EVALUATION,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      },
    );

    this.deploymentGroup = new codedeploy.LambdaDeploymentGroup(this, 'Group', {
      alias: props.alias,
      deploymentConfig: CONFIGS[props.deployment],
      alarms: [this.newVersionErrorRate, this.newVersionP99Duration],
      // A deployment that fails, is stopped by hand or sets off an alarm leaves the previous version serving.
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    // The alarms watch the new version before CodeDeploy starts moving traffic to it.
    props.alias.node.addDependency(this.newVersionErrorRate, this.newVersionP99Duration);
    Validations.of(this.deploymentGroup.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda deployments (aws-cdk-lib's LambdaDeploymentGroup), with the narrowest policy AWS maintains for them: read and update aliases, read alarm states, notify, invoke only hook functions named CodeDeployHook_* (this stack has none). Only CodeDeploy can assume it.",
    });
  }
}
