/**
 * Secrets Manager's two calls the project makes, as lean signed requests (aws/signed.ts, JSON 1.1 protocol):
 * read a secret's string (the proxy's cursor secret, the scheduled check's key) and put a new one (the check
 * key's provisioning at deploy). No SDK: the functions that call it carry `aws4` and node:http, nothing more.
 */
import { DEFAULT_REGION } from './env.js';
import { AwsCallError, type CredentialSource, SignedClient } from './signed.js';

export interface SecretsClientOptions {
  /** A Secrets Manager-compatible endpoint (tests, local stand-ins); AWS's regional one when absent. */
  endpoint?: string | undefined;
  /** The region of the endpoint; the secret ARN's own region when absent. */
  region?: string | undefined;
  credentials: CredentialSource;
}

/**
 * A client for the secret `arn`, in its own region (read from the ARN) unless one is given.
 * @example const client = secretsClient(arn, { credentials: roleCredentials(undefined) });
 */
export function secretsClient(arn: string, options: SecretsClientOptions): SignedClient {
  const region = options.region ?? arn.split(':')[3] ?? DEFAULT_REGION;
  return new SignedClient({
    origin: options.endpoint ?? `https://secretsmanager.${region}.amazonaws.com`,
    service: 'secretsmanager',
    region,
    credentials: options.credentials,
    connections: 1,
  });
}

/** The error code of a Secrets Manager answer (`__type`, as DynamoDB's JSON protocol), else its status. */
function errorCodeOf(body: Buffer, status: number): string {
  try {
    const type = (JSON.parse(body.toString('utf8')) as { __type?: unknown }).__type;
    if (typeof type === 'string' && type !== '') return type.split('#').pop()!;
  } catch {
    // Not JSON: named after the status.
  }
  return `HTTP ${status}`;
}

/** One Secrets Manager call: its parsed JSON answer, or an AwsCallError naming the refusal. */
async function call(
  client: SignedClient,
  operation: 'GetSecretValue' | 'PutSecretValue',
  input: object,
  signal: AbortSignal | undefined,
): Promise<Record<string, unknown>> {
  const response = await client.request({
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': `secretsmanager.${operation}`,
    },
    body: JSON.stringify(input),
    signal,
    retryOnReset: true,
    errorCode: ({ status, body }) => (status === 200 ? undefined : errorCodeOf(body, status)),
  });
  if (response.status !== 200) {
    const code = errorCodeOf(response.body, response.status);
    throw new AwsCallError(code, `${operation} failed (${code})`, response.status);
  }
  try {
    return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new Error(`${operation} answered something other than JSON`);
  }
}

/**
 * The current string value of the secret `arn` (one GetSecretValue); throws when it has none.
 * @example const key = await getSecretString(client, arn, AbortSignal.timeout(2_000));
 */
export async function getSecretString(
  client: SignedClient,
  arn: string,
  signal?: AbortSignal,
): Promise<string> {
  const value = (await call(client, 'GetSecretValue', { SecretId: arn }, signal)).SecretString;
  if (typeof value !== 'string') throw new Error('the secret has no string value');
  return value;
}

/**
 * Make `value` the current string value of the secret `arn` (one PutSecretValue).
 * @example await putSecretString(client, arn, generateApiKey());
 */
export async function putSecretString(
  client: SignedClient,
  arn: string,
  value: string,
  signal?: AbortSignal,
): Promise<void> {
  await call(client, 'PutSecretValue', { SecretId: arn, SecretString: value }, signal);
}
