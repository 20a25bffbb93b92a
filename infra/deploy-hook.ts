/**
 * The proxy deploys' post-traffic hook (ops/deploy-hook.ts): once CodeDeploy has moved every request to the new
 * version, it runs the smoke checks through the public URL (so against that version) and then bakes for
 * `deployBakeMinutes`, reading the deploy alarms every 30 s and running the checks again at the end. A failing
 * check or an alarm in ALARM answers CodeDeploy `Failed`: every request goes back to the previous version and
 * the stack update rolls back, as when an alarm stops the traffic shift.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { type CheckTargets, checkFunction } from './scheduled-check.js';

export interface DeployHookProps {
  readonly targets: CheckTargets;
  /** The check key's secret. */
  readonly secret: secretsmanager.ISecret;
  /** The alarms the bake reads (the deploy alarms of the new version). */
  readonly alarms: readonly cloudwatch.IAlarm[];
  /** Minutes of watching once every request goes to the new version (0–14). */
  readonly bakeMinutes: number;
  readonly logRetentionDays?: number | undefined;
}

/** Seconds the hook keeps besides the bake: two runs of the checks and their reads. */
const CHECKS_SECONDS = 120;

export class DeployHook extends Construct {
  readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: DeployHookProps) {
    super(scope, id);
    const { function: fn, role } = checkFunction(this, {
      handler: 'deployHook',
      fn: 'deploy-hook',
      description: `Catalogue Read API deploy hook (${Stack.of(this).stackName}): smoke checks and bake of a new proxy version`,
      targets: props.targets,
      secret: props.secret,
      // Lambda's limit, 15 minutes, holds the longest bake (14) with its checks.
      timeout: Duration.seconds(Math.min(900, props.bakeMinutes * 60 + CHECKS_SECONDS)),
      environment: {
        DEPLOY_ALARM_NAMES: props.alarms.map((alarm) => alarm.alarmName).join(','),
        DEPLOY_BAKE_MINUTES: String(props.bakeMinutes),
      },
      logRetentionDays: props.logRetentionDays,
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadDeployAlarms',
        actions: ['cloudwatch:DescribeAlarms'],
        resources: props.alarms.map((alarm) => alarm.alarmArn),
      }),
    );
    // CodeDeploy invokes it once per deploy, and reads its answer from PutLifecycleEventHookExecutionStatus.
    fn.configureAsyncInvoke({ retryAttempts: 0 });
    this.function = fn;
  }
}
