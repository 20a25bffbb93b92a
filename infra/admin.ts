/**
 * The key-administration API on AWS: a Lambda function (bundled from `admin/lambda.ts`) behind its own
 * function URL with `AuthType: AWS_IAM` — never an origin of the public distribution —, its least-privilege
 * role (the keys and counters tables only: the actions it uses, the two indexes it queries), its log group
 * (one audit line per call), and the managed policy the publisher's application attaches to call it.
 */
import { fileURLToPath } from 'node:url';
import { Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { KEY_CACHE_DEFAULTS, KEYS_SCHEMA } from '../tables/schema.js';
import { bundledFunction } from './bundling.js';
import { ownLogsAndRole } from './function-role.js';

/** The admin function's entry point (exports `handler`). */
export const ADMIN_ENTRY = fileURLToPath(new URL('../admin/lambda.ts', import.meta.url));

export interface AdminApiProps {
  readonly keysTable: dynamodb.ITable;
  readonly countersTable: dynamodb.ITable;
  /**
   * Usable keys an owner may hold at once (`ADMIN_MAX_KEYS_PER_OWNER`).
   * @default 10
   */
  readonly maxKeysPerOwner?: number;
  /**
   * The proxy's `KEY_CACHE_TTL_MS`, for the times the API says a change takes effect by.
   * @default 30000
   */
  readonly keyCacheTtlMs?: number;
  /**
   * Log retention in days (a `RetentionDays` value).
   * @default 30
   */
  readonly logRetentionDays?: number;
  /**
   * Removal policy of the log group.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

export class AdminApi extends Construct {
  readonly function: NodejsFunction;
  readonly functionUrl: lambda.FunctionUrl;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** What the publisher's application attaches to its role to call the API: invoke this URL, nothing else. */
  readonly callerPolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: AdminApiProps) {
    super(scope, id);
    const { keysTable, countersTable } = props;

    ({ logGroup: this.logGroup, role: this.role } = ownLogsAndRole(this, {
      description: 'Catalogue Read API key administration: keys and counters tables only',
      logRetentionDays: props.logRetentionDays,
      removalPolicy: props.removalPolicy,
    }));
    // Keys: read and write key items and owners' ledgers (never delete one), read several by hash.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ManageKeys',
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [keysTable.tableArn],
      }),
    );
    // A key by its id, an owner's keys: the two indexes, by name (no other index, no Scan).
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'FindKeys',
        actions: ['dynamodb:Query'],
        resources: [KEYS_SCHEMA.keyIdIndex, KEYS_SCHEMA.ownerIndex].map(
          (index) => `${keysTable.tableArn}/index/${index}`,
        ),
      }),
    );
    // Counters: read usage; Idempotency-Key records written, read, released; a revoked key's stop (admin/stop.ts).
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'UsageIdempotencyAndStops',
        actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'].map(
          (a) => `dynamodb:${a}`,
        ),
        resources: [countersTable.tableArn],
      }),
    );

    this.function = new NodejsFunction(this, 'Function', {
      // No AWS SDK: its DynamoDB calls are lean signed requests (aws/dynamodb.ts: aws4 over node:http), as
      // the proxy's; the SDK stays out of the bundle, like the proxy's (test/infra/stack.test.ts: its budget).
      ...bundledFunction(this, { fn: 'admin-function', entry: ADMIN_ENTRY, externalModules: ['@aws-sdk/*'] }),
      description: 'Catalogue Read API key administration: the admin API behind an AWS_IAM function URL',
      memorySize: 256,
      timeout: Duration.seconds(10),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        KEYS_TABLE: keysTable.tableName,
        COUNTERS_TABLE: countersTable.tableName,
        ADMIN_MAX_KEYS_PER_OWNER: String(props.maxKeysPerOwner ?? 10),
        KEY_CACHE_TTL_MS: String(props.keyCacheTtlMs ?? KEY_CACHE_DEFAULTS.ttlMs),
      },
    });

    // AWS_IAM: only SigV4-signed requests of principals allowed to invoke it reach the function; the
    // function URL answers the others 403 itself. No CloudFront in front: the public distribution has no
    // route to it. BUFFERED: the answers are small JSON documents.
    this.functionUrl = this.function.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.AWS_IAM,
      invokeMode: lambda.InvokeMode.BUFFERED,
    });

    // Since October 2025 a new function URL needs both lambda:InvokeFunctionUrl and lambda:InvokeFunction;
    // each is limited to this function, and to calls through its IAM-authenticated URL.
    this.callerPolicy = new iam.ManagedPolicy(this, 'CallerPolicy', {
      description: `Call the Catalogue Read API key-administration API (${Stack.of(this).stackName})`,
      statements: [
        new iam.PolicyStatement({
          sid: 'InvokeAdminUrl',
          actions: ['lambda:InvokeFunctionUrl'],
          resources: [this.function.functionArn],
          conditions: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
        }),
        new iam.PolicyStatement({
          sid: 'InvokeAdminThroughUrl',
          actions: ['lambda:InvokeFunction'],
          resources: [this.function.functionArn],
          conditions: { Bool: { 'lambda:InvokedViaFunctionUrl': 'true' } },
        }),
      ],
    });
  }
}
