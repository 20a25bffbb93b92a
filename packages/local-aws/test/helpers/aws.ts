/**
 * The AWS SDK's clients for the local servers (loopback credentials, path-style S3, checksums only when an
 * operation requires them, which s3rver does not check), and tables for the DynamoDB tests: a counters-like table
 * (`pk`, TTL on `expires_at`) and a keys-like one (`pk`).
 */
import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';

const LOOPBACK = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';

export function s3Client(options: { endpoint: string; maxAttempts?: number }): S3Client {
  return new S3Client({
    region: REGION,
    endpoint: options.endpoint,
    maxAttempts: options.maxAttempts ?? 2,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: LOOPBACK,
  });
}

export function dynamoClient(options: { endpoint: string; maxAttempts?: number }): DynamoDBClient {
  return new DynamoDBClient({
    region: REGION,
    endpoint: options.endpoint,
    maxAttempts: options.maxAttempts ?? 2,
    credentials: LOOPBACK,
  });
}

/** The TTL attribute of the counters-like table. */
export const TTL_ATTRIBUTE = 'expires_at';

/**
 * Create a keys-like and a counters-like table (each keyed by `pk`), TTL enabled on the counters' `expires_at`
 * (`unsupported`: a plain dynalite, which refuses UpdateTimeToLive).
 * @example await createTables(client, { keysTable: 'keys', countersTable: 'counters' }) // → { ttl: 'enabled' }
 */
export async function createTables(
  client: DynamoDBClient,
  names: { keysTable: string; countersTable: string },
): Promise<{ ttl: 'enabled' | 'unsupported' }> {
  for (const TableName of [names.keysTable, names.countersTable]) {
    await client.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: names.countersTable,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name !== 'UnknownOperationException') throw error;
    return { ttl: 'unsupported' };
  }
  return { ttl: 'enabled' };
}
