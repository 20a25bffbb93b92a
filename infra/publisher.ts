/**
 * The role the publisher assumes to run the builder against the bucket: write, read and delete objects
 * under the catalogue prefix, list that prefix; nothing else.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { prefixWildcardFinding } from './nag.js';

export interface PublisherRoleProps {
  readonly bucket: s3.IBucket;
  /** Key prefix of the published catalogue: `''` or ending in `/`. */
  readonly cataloguePrefix: string;
  /**
   * ARN of the principal allowed to assume the role.
   * @default - the account root: any principal of this account whose IAM policy allows sts:AssumeRole on it
   */
  readonly principalArn?: string;
}

export class PublisherRole extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: PublisherRoleProps) {
    super(scope, id);
    const prefix = props.cataloguePrefix;
    this.role = new iam.Role(this, 'Role', {
      assumedBy:
        props.principalArn !== undefined
          ? new iam.ArnPrincipal(props.principalArn)
          : new iam.AccountRootPrincipal(),
      description: 'Catalogue Read API publisher: run the builder against the catalogue prefix',
      // A publish of the full catalogue takes minutes; one hour leaves room without long-lived sessions.
      maxSessionDuration: Duration.hours(1),
    });
    // s3:PutObject also authorises the parts of a multipart upload; GetObject lets the builder read the
    // pointer and the versions it garbage-collects; DeleteObject is that garbage collection.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'WriteCatalogueObjects',
        actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
        resources: [props.bucket.arnForObjects(`${prefix}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ListCatalogueObjects',
        actions: ['s3:ListBucket'],
        resources: [props.bucket.bucketArn],
        ...(prefix === '' ? {} : { conditions: { StringLike: { 's3:prefix': [`${prefix}*`] } } }),
      }),
    );
    Validations.of(this.role).acknowledge({
      id: prefixWildcardFinding(props.bucket, prefix),
      reason:
        'The builder writes content-addressed objects whose keys are hashes known only at publish time, so writes are granted on the catalogue prefix; nothing outside the prefix is writable.',
    });
  }
}
