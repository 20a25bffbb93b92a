/** Names of cdk-nag findings that the stack acknowledges, computed the way cdk-nag prints them. */
import type * as s3 from 'aws-cdk-lib/aws-s3';

/**
 * The AwsSolutions-IAM5 finding id of a grant on every object under `prefix` of `bucket`
 * (cdk-nag prints the bucket ARN as `<LogicalId.Arn>`).
 * @example prefixWildcardFinding(bucket, 'catalogue/') === 'AwsSolutions-IAM5[Resource::<StorageCatalogue1A2B3C4D.Arn>/catalogue/*]'
 */
export function prefixWildcardFinding(bucket: s3.IBucket, prefix: string): string {
  const resource = bucket.node.defaultChild as s3.CfnBucket;
  const logicalId = resource.stack.resolve(resource.logicalId) as string;
  return `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${prefix}*]`;
}
