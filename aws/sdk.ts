/**
 * AWS SDK clients, configured for AWS or for a local S3/DynamoDB-compatible endpoint: for the builder's CLI,
 * table setup (`npm start`, `npm run keys -- create-tables`) and the tests; and the credentials the lean signed
 * calls use outside Lambda (key administration's client: {@link leanDynamo}). The Lambda functions carry none
 * of this (they sign their calls themselves: aws/signed.ts); all follow the same rules for endpoints and
 * loopback credentials (aws/env.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { LeanDynamo } from './dynamodb.js';
import { type AwsCredentials, awsRegion, endpointSetting, isLoopback, LOOPBACK_CREDENTIALS } from './env.js';

export { awsRegion } from './env.js';

export interface ClientOptions {
  /**
   * e.g. http://127.0.0.1:4569 for s3rver/dynalite; when absent, the endpoint the environment names
   * (`S3_ENDPOINT`/`DYNAMODB_ENDPOINT`, `AWS_ENDPOINT_URL_S3`/`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL`),
   * else AWS.
   */
  endpoint?: string | undefined;
  region?: string | undefined;
  /** SDK retries; our own timeouts bound each call, so keep this small. */
  maxAttempts?: number;
  /** Credentials to sign with whatever the environment holds (the upload builder's for a loopback endpoint). */
  credentials?: AwsCredentials;
}

/**
 * Local servers accept any credentials or only their own: fixed ones for a loopback endpoint, so no AWS
 * profile is needed on a fresh machine. Credentials in the environment still win here (the CLIs' tests use
 * them to see a server refuse); the Lambda function uses the fixed ones whatever the environment holds
 * (proxy/lambda-entry.ts).
 */
function localCredentials(endpoint: string | undefined) {
  return isLoopback(endpoint) && !process.env.AWS_ACCESS_KEY_ID
    ? { credentials: { ...LOOPBACK_CREDENTIALS } }
    : {};
}

/** The region of every client: the option, else AWS_REGION (set on Lambda), else us-east-1. */
export function regionOf(options: ClientOptions = {}): string {
  return awsRegion(options.region);
}

/**
 * Credentials for the lean signed clients outside Lambda (`npm start`, tests, benchmarks), chosen as the SDK
 * clients choose theirs: the fixed local ones for a loopback endpoint (unless the environment holds some),
 * else the SDK's default provider chain
 * (environment, profile, SSO, web identity, container or instance metadata). The chain caches what it found
 * and fetches new credentials before they expire, so calling it per request costs a resolved promise. The
 * Lambda function takes its credentials from the environment instead (proxy/lambda-entry.ts).
 * @example const credentials = credentialProvider(process.env.S3_ENDPOINT);
 */
export function credentialProvider(endpoint: string | undefined): AwsCredentialIdentityProvider {
  const local = localCredentials(endpoint).credentials;
  if (local) return () => Promise.resolve(local);
  return defaultProvider();
}

export function s3Client(options: ClientOptions = {}): S3Client {
  const endpoint = options.endpoint ?? endpointSetting('s3')?.value;
  return new S3Client({
    region: awsRegion(options.region),
    maxAttempts: options.maxAttempts ?? 2,
    ...(endpoint
      ? {
          endpoint,
          forcePathStyle: true,
          // s3rver rejects the SDK's default CRC checksums on upload.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }
      : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : localCredentials(endpoint)),
  });
}

export function dynamoClient(options: ClientOptions = {}): DynamoDBClient {
  const endpoint = options.endpoint ?? endpointSetting('dynamodb')?.value;
  return new DynamoDBClient({
    region: awsRegion(options.region),
    maxAttempts: options.maxAttempts ?? 2,
    ...(endpoint ? { endpoint } : {}),
    ...localCredentials(endpoint),
  });
}

/**
 * Key administration's DynamoDB client outside Lambda (`npm run keys`, `npm start`, tests): lean signed
 * requests (aws/dynamodb.ts) with {@link credentialProvider}'s credentials. Close it when done.
 * @example const dynamo = leanDynamo(process.env.DYNAMODB_ENDPOINT);
 */
export function leanDynamo(endpoint?: string, region?: string): LeanDynamo {
  const at = endpoint ?? endpointSetting('dynamodb')?.value;
  return new LeanDynamo({ endpoint: at, region: awsRegion(region), credentials: credentialProvider(at) });
}
