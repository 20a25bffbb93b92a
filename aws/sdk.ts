/** AWS SDK clients, configured for AWS or for a local S3/DynamoDB-compatible endpoint. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { awsRegion } from './env.js';

export { awsRegion, silenceSdkNodeVersionWarning } from './env.js';

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

/** The region of every client: the option, else AWS_REGION (set on Lambda), else us-east-1. */
export function regionOf(options: ClientOptions = {}): string {
  return awsRegion(options.region);
}

/**
 * Credentials for the lean hot-path clients (aws/signed.ts), chosen as the SDK clients choose theirs:
 * the fixed local ones for a loopback endpoint, else the SDK's default provider chain (environment — as on
 * Lambda —, profile, SSO, web identity, container or instance metadata). The chain caches what it found and
 * fetches new credentials before they expire (within five minutes of `expiration`), so calling it per
 * request costs a resolved promise.
 * @example const credentials = credentialProvider(process.env.S3_ENDPOINT);
 */
export function credentialProvider(endpoint: string | undefined): AwsCredentialIdentityProvider {
  const local = localCredentials(endpoint).credentials;
  if (local) return () => Promise.resolve(local);
  return defaultProvider();
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
