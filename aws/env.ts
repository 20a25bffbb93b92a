/**
 * The AWS environment as our processes read it, without loading the SDK: the region, where each service's
 * endpoint is, and the credentials the lean signed calls (aws/signed.ts) sign with. The Lambda function reads
 * everything here; the SDK clients (aws/sdk.ts, for the CLIs, `npm start`'s setup and the tests) use the same
 * rules, so a variable means the same thing to every client.
 */

type Env = Record<string, string | undefined>;

/** The region when none is given and `AWS_REGION` is unset. */
export const DEFAULT_REGION = 'us-east-1';

/**
 * The region the clients use: the one given, else `AWS_REGION`, else us-east-1. Messages that name the
 * region call it too, so they name the one actually used.
 * @example awsRegion() // → 'us-east-1' when AWS_REGION is unset
 */
export function awsRegion(region?: string, env: Env = process.env): string {
  return region ?? env.AWS_REGION ?? DEFAULT_REGION;
}

/** The services the project calls. */
export type AwsService = 's3' | 'dynamodb' | 'secretsmanager' | 'events' | 'codedeploy' | 'cloudwatch';

/**
 * Where each service's endpoint may be set, most specific first: the project's own variable (kept as an
 * alias), the SDKs' service-specific variable, the SDKs' global one. The standard names are the AWS SDKs'
 * ("service-specific endpoints"); `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` turns the standard ones off,
 * as it does for the SDKs.
 */
const ENDPOINT_VARIABLES: Record<AwsService, { alias?: string; standard: string }> = {
  s3: { alias: 'S3_ENDPOINT', standard: 'AWS_ENDPOINT_URL_S3' },
  dynamodb: { alias: 'DYNAMODB_ENDPOINT', standard: 'AWS_ENDPOINT_URL_DYNAMODB' },
  secretsmanager: { standard: 'AWS_ENDPOINT_URL_SECRETS_MANAGER' },
  events: { standard: 'AWS_ENDPOINT_URL_EVENTBRIDGE' },
  codedeploy: { standard: 'AWS_ENDPOINT_URL_CODEDEPLOY' },
  cloudwatch: { standard: 'AWS_ENDPOINT_URL_CLOUDWATCH' },
};

/**
 * The configured endpoint of `service` and the variable that set it; undefined for AWS's own endpoint.
 * @example endpointSetting('s3', { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }) // → { name: 'AWS_ENDPOINT_URL', value: 'http://127.0.0.1:4566' }
 */
export function endpointSetting(
  service: AwsService,
  env: Env = process.env,
): { name: string; value: string } | undefined {
  const { alias, standard } = ENDPOINT_VARIABLES[service];
  const ignoreStandard = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.trim().toLowerCase() === 'true';
  const names = [alias, ...(ignoreStandard ? [] : [standard, 'AWS_ENDPOINT_URL'])];
  for (const name of names) {
    const value = name === undefined ? undefined : env[name]?.trim();
    if (name !== undefined && value) return { name, value };
  }
  return undefined;
}

/**
 * Whether an endpoint is on this machine (s3rver, dynalite, a test's stand-in), where fixed credentials are
 * used whatever the environment holds.
 * @example isLoopback('http://127.0.0.1:4568') // → true
 */
export function isLoopback(endpoint: string | undefined): boolean {
  if (!endpoint || !URL.canParse(endpoint)) return false;
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * The credentials every client uses for a loopback endpoint: local servers accept only their own (s3rver's
 * are these), and a developer's AWS credentials must never be sent to them.
 */
export const LOOPBACK_CREDENTIALS: AwsCredentials = Object.freeze({
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
});

/**
 * The credentials in the environment, as Lambda sets them for the function's role (`AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`); undefined when they are not there.
 * @example environmentCredentials({ AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's' }) // → { accessKeyId: 'AKID', secretAccessKey: 's' }
 */
export function environmentCredentials(env: Env = process.env): AwsCredentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env.AWS_SESSION_TOKEN?.trim();
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/**
 * The credentials of a Lambda function's role, as Lambda puts them in the environment for the execution
 * environment's lifetime (read once, when first asked); the fixed local ones for a loopback endpoint, whatever
 * the environment holds. The proxy and the admin function sign every call with these.
 * @example const credentials = roleCredentials(process.env.AWS_ENDPOINT_URL_DYNAMODB); credentials().accessKeyId
 */
export function roleCredentials(endpoint: string | undefined): () => AwsCredentials {
  if (isLoopback(endpoint)) return () => LOOPBACK_CREDENTIALS;
  let credentials = environmentCredentials();
  return () => {
    credentials ??= environmentCredentials();
    if (!credentials)
      throw new Error('no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)');
    return credentials;
  };
}

/** An integer setting's bounds, and its value when the variable is unset or blank. */
export interface IntegerRule {
  fallback: number;
  min: number;
  max: number;
}

/**
 * An integer setting from the environment, by the one rule of every process that reads one (the proxy, the
 * admin function and CLI, the upload builder, `npm start`): unset or blank is `fallback`; otherwise canonical
 * decimal digits (no sign, fraction, exponent or leading zero) within `min`…`max`, else a problem naming the
 * variable, which the caller reports as it reports its other settings.
 * @example integerSetting({ POINTER_TTL_MS: '500' }, 'POINTER_TTL_MS', { fallback: 5000, min: 0, max: 3600000 }) // → { ok: true, value: 500 }
 * @example integerSetting({ PORT: '08' }, 'PORT', { fallback: 8787, min: 0, max: 65535 }) // → { ok: false, problem: 'PORT must be an integer between 0 and 65535' }
 */
export function integerSetting(
  env: Env,
  name: string,
  rule: IntegerRule,
): { ok: true; value: number } | { ok: false; problem: string } {
  const raw = env[name]?.trim();
  if (!raw) return { ok: true, value: rule.fallback };
  const value = Number(raw);
  if (!/^(0|[1-9][0-9]*)$/.test(raw) || value < rule.min || value > rule.max) {
    return { ok: false, problem: `${name} must be an integer between ${rule.min} and ${rule.max}` };
  }
  return { ok: true, value };
}
