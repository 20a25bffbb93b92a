/**
 * Safe deploys of the proxy (docs/operating.md, "Safe deploys"): each deploy publishes a version
 * (infra/proxy-function.ts) and CodeDeploy moves the `live` alias, which the distribution reaches, from the
 * previous version to it as `proxyDeployment` says (10 % for 5 minutes, then all, by default), watching four
 * alarms on the new version alone: its 5xx rate (its request lines and Lambda's Errors), Lambda's own 5xx of it
 * (the function URL's Url5xxCount and Errors, whatever its log lines say), its share of 4xx answers against the
 * live version's (a key-lookup regression answers 401 to valid keys), and its p99 duration. Once every request
 * goes to it, the post-traffic hook (infra/deploy-hook.ts) runs the smoke checks and bakes. An alarm in ALARM,
 * or a failing hook, stops the deployment and moves every request back to the previous version; the stack
 * update then fails and CloudFormation rolls it back. The first deploy creates the alias on the first version:
 * there is nothing to shift from, so CodeDeploy does not run.
 *
 * Each deploy alarm's name ends with the version it watches (`…-v7`): a new version makes new alarms, which
 * start without data, so an alarm left in ALARM by a failed version cannot stop the deploy of its fix (CloudWatch
 * keeps an updated alarm's state: the trap AWS SAM's users met).
 *
 * The admin function and the upload builder are deployed at once, on purpose (docs/operating.md says why): their
 * traffic is too thin for a canary's alarms to judge, and their failures leave the catalogue served.
 */
import { type CustomResource, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { DeployHook } from './deploy-hook.js';
import type { ProxyDeployment } from './props.js';
import { requestMetric } from './request-metrics.js';
import { runbookDescription } from './runbook.js';
import type { CheckTargets } from './scheduled-check.js';

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
export const EVALUATION = { evaluationPeriods: 3, datapointsToAlarm: 2 } as const;
/** Requests a minute each version must answer before their 4xx shares are compared. */
export const MIN_COMPARED_REQUESTS = 10;

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
  /** Points by which the new version's 4xx share may exceed the live one's (`newVersion4xxIncreasePercent`). */
  readonly newVersion4xxIncreasePercent: number;
  /** What the post-traffic hook checks, with the check key's secret and its provisioning (traffic waits for it). */
  readonly hook: {
    targets: CheckTargets;
    secret: secretsmanager.ISecret;
    key: CustomResource;
    bakeMinutes: number;
    logRetentionDays?: number | undefined;
  };
}

/** A deploy alarm's name: the stack's, the alarm's, and the version it watches (`Catalogue-proxy-new-version-5xx-rate-v7`). */
function versionedName(scope: Construct, name: string, version: string): string {
  return `${Stack.of(scope).stackName}-${name}-v${version}`;
}

export class ProxyDeploys extends Construct {
  readonly deploymentGroup: codedeploy.LambdaDeploymentGroup;
  /** The new version's 5xx rate: answered 5xx (its request lines' metrics) and failed invocations. */
  readonly newVersionErrorRate: cloudwatch.Alarm;
  /** The new version's 5xx rate as Lambda counts it (function URL 5xx, invocation errors): no log line needed. */
  readonly newVersionRuntimeErrors: cloudwatch.Alarm;
  /** The new version's share of 4xx (429 included) above the live version's. */
  readonly newVersion4xxRate: cloudwatch.Alarm;
  readonly newVersionP99Duration: cloudwatch.Alarm;
  /** The post-traffic hook. */
  readonly hook: DeployHook;
  readonly #props: ProxyDeploysProps;
  readonly #version: string;

  constructor(scope: Construct, id: string, props: ProxyDeploysProps) {
    super(scope, id);
    this.#props = props;
    this.#version = props.version.version;
    this.newVersionErrorRate = this.#errorRate();
    this.newVersionRuntimeErrors = this.#runtimeErrors();
    this.newVersion4xxRate = this.#clientErrors();
    this.newVersionP99Duration = this.#p99();
    const alarms = [
      this.newVersionErrorRate,
      this.newVersionRuntimeErrors,
      this.newVersion4xxRate,
      this.newVersionP99Duration,
    ];
    this.hook = new DeployHook(this, 'Hook', { ...props.hook, alarms });
    this.deploymentGroup = new codedeploy.LambdaDeploymentGroup(this, 'Group', {
      alias: props.alias,
      deploymentConfig: CONFIGS[props.deployment],
      alarms,
      postHook: this.hook.function,
      // A deployment that fails, is stopped by hand or sets off an alarm leaves the previous version serving.
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    // The alarms watch the new version, and the check key the hook reads with is registered, before CodeDeploy
    // starts moving traffic to it.
    props.alias.node.addDependency(...alarms, props.hook.key);
    const hookLogicalId = Stack.of(this).resolve(
      (this.hook.function.node.defaultChild as lambda.CfnFunction).logicalId,
    ) as string;
    Validations.of(this.deploymentGroup.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${hookLogicalId}.Arn>:*]`,
      reason:
        "aws-cdk-lib's post-hook grant lets CodeDeploy invoke the hook function and its versions: this one function, which only checks and reports.",
    });
    Validations.of(this.deploymentGroup.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda deployments (aws-cdk-lib's LambdaDeploymentGroup), with the narrowest policy AWS maintains for them: read and update aliases, read alarm states, notify, invoke only hook functions named CodeDeployHook_*; its one other grant is to invoke this stack's post-traffic hook. Only CodeDeploy can assume it.",
    });
  }

  /**
   * Lambda's metric of the versions the alias runs: Resource is the alias, ExecutedVersion the version (the
   * new one, or every version the alias runs when `allVersions`).
   */
  #lambdaMetric(metricName: string, statistic: string, allVersions = false): cloudwatch.Metric {
    const functionName = this.#props.function.functionName;
    return new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: {
        FunctionName: functionName,
        Resource: `${functionName}:${this.#props.alias.aliasName}`,
        ...(!allVersions && { ExecutedVersion: this.#version }),
      },
      statistic,
      period: PERIOD,
    });
  }

  /** The request lines' count of answers of `status_class`, of the new version (or of every version). */
  #answers(statusClass: string, allVersions = false): cloudwatch.Metric {
    const dimensions: Record<string, string> = allVersions
      ? { status_class: statusClass }
      : { version: this.#version, status_class: statusClass };
    return requestMetric(this, dimensions, cloudwatch.Stats.SAMPLE_COUNT, { period: PERIOD });
  }

  /** An alarm of the deploy: one-minute periods, two of three breaching, no data as not breaching. */
  #alarm(
    metric: cloudwatch.Metric | cloudwatch.MathExpression,
    options: { id: string; name: string; description: string; threshold: number },
  ): cloudwatch.Alarm {
    return metric.createAlarm(this, options.id, {
      alarmName: versionedName(this, options.name, this.#version),
      alarmDescription: runbookDescription(this, options.name, options.description),
      threshold: options.threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      ...EVALUATION,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  // Answered 5xx (a dependency failing, a configuration the version cannot use) are in the request lines'
  // metrics by version; crashes and timeouts write no request line and are Lambda's Errors.
  #errorRate(): cloudwatch.Alarm {
    const expression = new cloudwatch.MathExpression({
      expression: '100 * (FILL(answered, 0) + FILL(failed, 0)) / invocations',
      usingMetrics: {
        answered: this.#answers('5xx'),
        failed: this.#lambdaMetric('Errors', cloudwatch.Stats.SUM),
        invocations: this.#lambdaMetric('Invocations', cloudwatch.Stats.SUM),
      },
      label: 'New proxy version: 5xx rate (%)',
      period: PERIOD,
    });
    return this.#alarm(expression, {
      id: 'NewVersionErrorRate',
      name: 'proxy-new-version-5xx-rate',
      description:
        "The proxy version this deploy published answered more than the threshold percentage of its requests with a 5xx (or failed them) in two of three minutes. While CodeDeploy moves traffic to it, this stops the deploy and moves every request back to the previous version; CloudFormation then rolls the stack back. Read that version's 5xx log lines (filter version = the number) for the error code.",
      threshold: this.#props.errorRateThresholdPercent,
    });
  }

  // Lambda's own count, whatever the version logs: the function URL's 5xx (answered 503s, crashes, timeouts)
  // or its failed invocations (an error after the answer began streaming), the larger of the two (a crash is
  // counted by both), per request the URL received. A version whose request line broke passes the alarm above
  // while answering 503; not this one.
  #runtimeErrors(): cloudwatch.Alarm {
    const expression = new cloudwatch.MathExpression({
      expression: '100 * MAX([FILL(url5xx, 0), FILL(errors, 0)]) / requests',
      usingMetrics: {
        url5xx: this.#lambdaMetric('Url5xxCount', cloudwatch.Stats.SUM),
        errors: this.#lambdaMetric('Errors', cloudwatch.Stats.SUM),
        requests: this.#lambdaMetric('UrlRequestCount', cloudwatch.Stats.SUM),
      },
      label: "New proxy version: Lambda's 5xx rate (%)",
      period: PERIOD,
    });
    return this.#alarm(expression, {
      id: 'NewVersionRuntimeErrors',
      name: 'proxy-new-version-runtime-errors',
      description:
        "Lambda's own metrics of the proxy version this deploy published (its function URL's 5xx answers, its failed invocations) were above the threshold percentage of its requests in two of three minutes, whatever its log lines say. While CodeDeploy moves traffic to it, this stops the deploy and moves every request back to the previous version.",
      threshold: this.#props.errorRateThresholdPercent,
    });
  }

  // The new version's share of 4xx answers (401, 400, 404…, and 429) against the live version's in the same
  // minute: every request of the alias but the new version's is the live version's. Compared only when both
  // answered MIN_COMPARED_REQUESTS in the minute: a share of three requests says nothing.
  #clientErrors(): cloudwatch.Alarm {
    const refused = '(FILL(n4xx, 0) + FILL(n429, 0))';
    const allRefused = '(FILL(a4xx, 0) + FILL(a429, 0))';
    const live = '(FILL(all, 0) - FILL(new, 0))';
    const expression = new cloudwatch.MathExpression({
      expression: `IF(FILL(new, 0) >= ${MIN_COMPARED_REQUESTS} AND ${live} >= ${MIN_COMPARED_REQUESTS}, 100 * ${refused} / new - 100 * (${allRefused} - ${refused}) / ${live}, 0)`,
      usingMetrics: {
        n4xx: this.#answers('4xx'),
        n429: this.#answers('429'),
        a4xx: this.#answers('4xx', true),
        a429: this.#answers('429', true),
        new: this.#lambdaMetric('Invocations', cloudwatch.Stats.SUM),
        all: this.#lambdaMetric('Invocations', cloudwatch.Stats.SUM, true),
      },
      label: 'New proxy version: 4xx share above the live version (points)',
      period: PERIOD,
    });
    return this.#alarm(expression, {
      id: 'NewVersion4xxRate',
      name: 'proxy-new-version-4xx-rate',
      description:
        "The proxy version this deploy published answered a share of 4xx (401 invalid_key or missing_authorization, 400, 404, 429...) more than the threshold in percentage points above the live version's, in two of three minutes in which both answered enough requests: a key-lookup or request-parsing regression. While CodeDeploy moves traffic to it, this stops the deploy and moves every request back.",
      threshold: this.#props.newVersion4xxIncreasePercent,
    });
  }

  #p99(): cloudwatch.Alarm {
    return this.#alarm(this.#lambdaMetric('Duration', cloudwatch.Stats.p(99)), {
      id: 'NewVersionP99Duration',
      name: 'proxy-new-version-p99-duration',
      description:
        'The slowest 1% of the invocations of the proxy version this deploy published took longer than the threshold in two of three minutes. While CodeDeploy moves traffic to it, this stops the deploy and moves every request back to the previous version; CloudFormation then rolls the stack back.',
      threshold: this.#props.p99DurationThresholdMs,
    });
  }
}
