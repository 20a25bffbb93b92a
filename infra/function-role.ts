/**
 * A function's own log group and role, shared by the stack's functions (proxy, admin API, upload builder):
 * a role of our own instead of Lambda's default one, whose AWSLambdaBasicExecutionRole may create log groups
 * and write to any of them. The role may write to this log group only; each construct adds what else its
 * function may do.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** `Logs` and `Role` in `scope`, the role allowed to write to those logs (statement `WriteOwnLogs`). */
export function ownLogsAndRole(
  scope: Construct,
  options: { description: string; logRetentionDays?: logs.RetentionDays; removalPolicy?: RemovalPolicy },
): { logGroup: logs.LogGroup; role: iam.Role } {
  const logGroup = new logs.LogGroup(scope, 'Logs', {
    retention: options.logRetentionDays ?? logs.RetentionDays.ONE_MONTH,
    removalPolicy: options.removalPolicy,
  });
  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: options.description,
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'WriteOwnLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  return { logGroup, role };
}
