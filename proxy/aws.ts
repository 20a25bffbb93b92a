/** AWS SDK clients, configured for AWS or for a local S3/DynamoDB-compatible endpoint. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { awsRegion } from './aws-env.js';

export { awsRegion, silenceSdkNodeVersionWarning } from './aws-env.js';

export interface ClientOptions {
  /** e.g. http://127.0.0.1:4569 for s3rver/dynalite; AWS when absent. */
  endpoint?: string | undefined;
  region?: string | undefined;
  /** SDK retries; our own timeouts bound each call, so keep this small. */
  maxAttempts?: number;
}

function isLocal(endpoint: string | undefined): boolean {
  if (!endpoint) return false;
  const host = new URL(endpoint).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]';
}

/** Local servers accept any credentials; use fixed ones so no AWS profile is needed on a fresh machine. */
function localCredentials(endpoint: string | undefined) {
  return isLocal(endpoint) && !process.env.AWS_ACCESS_KEY_ID
    ? { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } }
    : {};
}

export function s3Client(options: ClientOptions = {}): S3Client {
  return new S3Client({
    region: awsRegion(options.region),
    maxAttempts: options.maxAttempts ?? 2,
    ...(options.endpoint
      ? {
          endpoint: options.endpoint,
          forcePathStyle: true,
          // s3rver rejects the SDK's default CRC checksums on upload.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }
      : {}),
    ...localCredentials(options.endpoint),
  });
}

export function dynamoClient(options: ClientOptions = {}): DynamoDBClient {
  return new DynamoDBClient({
    region: awsRegion(options.region),
    maxAttempts: options.maxAttempts ?? 2,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...localCredentials(options.endpoint),
  });
}
