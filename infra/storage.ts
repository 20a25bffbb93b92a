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
  /**
   * Days a noncurrent version of a catalogue-bucket object is kept.
   * @default 30
   */
  readonly noncurrentVersionDays?: number;
  /**
   * An existing keys table to use instead of creating one (a point-in-time restore's: `keysTableName`).
   * @default - the stack's own keys table
   */
  readonly keysTableName?: string;
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
  /** The stack's own keys table, or the one `keysTableName` names (every reader and writer uses this one). */
  readonly keysTable: dynamodb.ITable;
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
      // Versioned: an overwritten pointer (current.json), publication log or report, and an object the builder
      // collected, stay restorable for noncurrentVersionDays (docs/operating.md, "Data protection and restore").
      // Objects are content-addressed and immutable: only what a publish overwrites or collects is kept.
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.logBucket,
      serverAccessLogsPrefix: 's3-access/',
      lifecycleRules: [
        // Deliberately no expiration of live objects: which objects are garbage depends on which version
        // is current and on the 24 h retention of superseded versions, which only the builder knows (it
        // reads versions/ and collects after publishing). An age-based rule would delete objects that an
        // unchanged catalogue still serves. Only the leftovers of interrupted uploads are cleaned here.
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        {
          id: 'expire-noncurrent-versions',
          noncurrentVersionExpiration: Duration.days(props.noncurrentVersionDays ?? 30),
        },
        // A delete marker with no version left under it (an expired upload's, a collected object's) is removed.
        { id: 'remove-expired-delete-markers', expiredObjectDeleteMarker: true },
      ],
      removalPolicy,
    });

    this.keysTable =
      props.keysTableName === undefined
        ? keysTable(this, { deletionProtection, removalPolicy })
        : // A restored table (docs/operating.md, "Restore the keys table"): CloudFormation does not manage it,
          // so its point-in-time recovery and deletion protection are set by the restore procedure.
          dynamodb.Table.fromTableName(this, 'RestoredKeys', props.keysTableName);

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

/** The keys table: on demand, point-in-time recovery, the key-id and owner indexes (tables/schema.ts). */
function keysTable(
  scope: Construct,
  options: { deletionProtection: boolean; removalPolicy?: RemovalPolicy | undefined },
): dynamodb.Table {
  const table = new dynamodb.Table(scope, 'Keys', {
    partitionKey: { name: KEYS_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    // Keys are the one irreplaceable record (only their hashes exist): allow restoring any second.
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: options.deletionProtection,
    removalPolicy: options.removalPolicy,
  });
  // Key administration finds a key by its public id (to read, revoke or roll it) without knowing the key,
  // and an owner's keys in the order they were issued (the schema: tables/schema.ts, as createTables).
  table.addGlobalSecondaryIndex({
    indexName: KEYS_SCHEMA.keyIdIndex,
    partitionKey: { name: KEYS_SCHEMA.keyIdAttribute, type: dynamodb.AttributeType.STRING },
    projectionType: dynamodb.ProjectionType.ALL,
  });
  table.addGlobalSecondaryIndex({
    indexName: KEYS_SCHEMA.ownerIndex,
    partitionKey: { name: KEYS_SCHEMA.ownerAttribute, type: dynamodb.AttributeType.STRING },
    sortKey: { name: KEYS_SCHEMA.ownerSortAttribute, type: dynamodb.AttributeType.STRING },
    projectionType: dynamodb.ProjectionType.ALL,
  });
  return table;
}
