/**
 * Where the product keeps state: the catalogue bucket (published objects), the access-log bucket, and the
 * two DynamoDB tables (keys and quota counters).
 */
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { COUNTERS_SCHEMA, KEYS_SCHEMA } from '../tables/schema.js';

export interface StorageProps {
  /**
   * What happens to buckets and tables when they leave the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on both tables.
   * @default true
   */
  readonly deletionProtection?: boolean;
  /**
   * Days the S3 and CloudFront access logs are kept.
   * @default 90
   */
  readonly accessLogRetentionDays?: number;
  /**
   * The counters table's capacity: on demand, or provisioned with auto scaling of its writes between `min`
   * and `max` WCU (and of its few reads: the admin API's usage, a refused meter's read) at 70 % utilisation.
   * @default { mode: 'on-demand' }
   */
  readonly countersCapacity?: CountersCapacityProps;
}

export type CountersCapacityProps = { mode: 'on-demand' } | { mode: 'provisioned'; min: number; max: number };

/** Auto scaling's target: the utilisation of the provisioned capacity it keeps (DynamoDB's console default). */
export const COUNTERS_TARGET_UTILIZATION_PERCENT = 70;
/** The counters table's reads, provisioned: the admin API's usage and Idempotency-Key reads, a refused meter's. */
const COUNTERS_READ_CAPACITY = { minCapacity: 5, maxCapacity: 500 };

export class Storage extends Construct {
  /** The published catalogue: `<prefix>current.json`, `<prefix>versions/`, `<prefix>o/`. */
  readonly bucket: s3.Bucket;
  /** S3 server access logs (`s3-access/`) and CloudFront standard logs (`cloudfront/`). */
  readonly logBucket: s3.Bucket;
  readonly keysTable: dynamodb.Table;
  readonly countersTable: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StorageProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy;
    const deletionProtection = props.deletionProtection ?? true;

    this.logBucket = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // CloudFront standard logging writes with an ACL grant (awslogsdelivery), so this bucket needs ACLs;
      // BUCKET_OWNER_PREFERRED still makes the bucket owner own every log object.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [
        {
          id: 'expire-access-logs',
          expiration: Duration.days(props.accessLogRetentionDays ?? 90),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy,
    });

    this.bucket = new s3.Bucket(this, 'Catalogue', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // Objects are content-addressed and immutable, and the builder itself keeps superseded versions
      // readable for 24 h before collecting them, so S3 versioning would only keep garbage.
      versioned: false,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.logBucket,
      serverAccessLogsPrefix: 's3-access/',
      lifecycleRules: [
        // Deliberately no expiration of live objects: which objects are garbage depends on which version
        // is current and on the 24 h retention of superseded versions, which only the builder knows (it
        // reads versions/ and collects after publishing). An age-based rule would delete objects that an
        // unchanged catalogue still serves. Only the leftovers of interrupted uploads are cleaned here.
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy,
    });

    this.keysTable = new dynamodb.Table(this, 'Keys', {
      partitionKey: { name: KEYS_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      // Keys are the one irreplaceable record (only their hashes exist): allow restoring any second.
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy,
    });
    // Key administration finds a key by its public id (to read, revoke or roll it) without knowing the key,
    // and an owner's keys in the order they were issued (the schema: tables/schema.ts, as createTables).
    this.keysTable.addGlobalSecondaryIndex({
      indexName: KEYS_SCHEMA.keyIdIndex,
      partitionKey: { name: KEYS_SCHEMA.keyIdAttribute, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    this.keysTable.addGlobalSecondaryIndex({
      indexName: KEYS_SCHEMA.ownerIndex,
      partitionKey: { name: KEYS_SCHEMA.ownerAttribute, type: dynamodb.AttributeType.STRING },
      sortKey: { name: KEYS_SCHEMA.ownerSortAttribute, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    this.countersTable = countersTable(this, {
      capacity: props.countersCapacity ?? { mode: 'on-demand' },
      deletionProtection,
      removalPolicy,
    });
    Validations.of(this.countersTable).acknowledge({
      id: 'AwsSolutions-DDB3',
      reason:
        'Quota counters live for one calendar month and are rebuilt by traffic; restoring them to an earlier second would only hand keys quota they already used, so point-in-time recovery buys nothing.',
    });
  }
}

/**
 * The counters table (one item per key and month, and the admin API's Idempotency-Key records), on demand or
 * provisioned with auto scaling.
 */
function countersTable(
  scope: Construct,
  options: {
    capacity: CountersCapacityProps;
    deletionProtection: boolean;
    removalPolicy?: RemovalPolicy | undefined;
  },
): dynamodb.Table {
  const { capacity, deletionProtection, removalPolicy } = options;
  const table = new dynamodb.Table(scope, 'Counters', {
    partitionKey: { name: COUNTERS_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
    // One metering write per request: on demand by default; provisioned for a steady high volume, at about
    // 0.4× the price per write (docs/operating.md, "Cost at volume").
    ...(capacity.mode === 'provisioned'
      ? {
          billingMode: dynamodb.BillingMode.PROVISIONED,
          writeCapacity: capacity.min,
          readCapacity: COUNTERS_READ_CAPACITY.minCapacity,
        }
      : { billingMode: dynamodb.BillingMode.PAY_PER_REQUEST }),
    // One item per key and month, and the admin API's Idempotency-Key records; DynamoDB deletes each
    // after its time (a month plus a grace period; 24 hours).
    timeToLiveAttribute: COUNTERS_SCHEMA.ttlAttribute,
    deletionProtection,
    removalPolicy,
  });
  if (capacity.mode === 'provisioned') {
    const target = { targetUtilizationPercent: COUNTERS_TARGET_UTILIZATION_PERCENT };
    table
      .autoScaleWriteCapacity({ minCapacity: capacity.min, maxCapacity: capacity.max })
      .scaleOnUtilization(target);
    table.autoScaleReadCapacity(COUNTERS_READ_CAPACITY).scaleOnUtilization(target);
  }
  return table;
}
