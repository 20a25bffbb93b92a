/**
 * What `npm run smoke` checks, from its options, the environment (the `export` lines `npm start` prints) or a
 * deployed stack's CloudFormation outputs (`--stack`, read with the SDK): the API and its reference page, the
 * key, the admin API with the caller's credentials, the catalogue location of the live version.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { isLoopback } from '../aws/env.js';
import { awsRegion, credentialProvider } from '../aws/sdk.js';
import type { CredentialSource } from '../aws/signed.js';
import { UsageError } from '../cli/kit.js';
import { errorMessage } from '../store/errors.js';
import { type AdminTarget, functionUrlRegion } from './admin-check.js';
import type { ApiTarget } from './api-checks.js';
import type { CatalogueTarget } from './live-version.js';

/** The stack outputs the smoke check reads (infra/stack.ts names them; test/ops/target.test.ts checks). */
export const STACK_OUTPUTS = ['ApiUrl', 'ReferenceUrl', 'AdminApiUrl', 'CatalogueUri', 'Region'] as const;
type StackOutputs = Partial<Record<(typeof STACK_OUTPUTS)[number], string>>;

/** The options `npm run smoke` takes that name what to check. */
export interface TargetOptions {
  url?: string | undefined;
  key?: string | undefined;
  stack?: string | undefined;
  region?: string | undefined;
  'admin-url'?: string | undefined;
  catalogue?: string | undefined;
  endpoint?: string | undefined;
}

export interface SmokeTarget {
  api: ApiTarget;
  admin: AdminTarget | { skip: string };
  catalogue: CatalogueTarget | { skip: string };
}

type Env = Record<string, string | undefined>;

/**
 * A stack's outputs by name, from CloudFormation's DescribeStacks (the SDK's default credentials; the
 * endpoint `AWS_ENDPOINT_URL_CLOUDFORMATION` names, if any).
 */
export async function describeStackOutputs(stack: string, region: string): Promise<Record<string, string>> {
  const client = new CloudFormationClient({ region, maxAttempts: 2 });
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stack }));
    const outputs = Stacks?.[0]?.Outputs ?? [];
    return Object.fromEntries(outputs.map((output) => [output.OutputKey ?? '', output.OutputValue ?? '']));
  } catch (error) {
    throw new UsageError(`--stack ${stack} in ${region}: ${errorMessage(error)}`);
  } finally {
    client.destroy();
  }
}

/** `url` as an http(s) URL without a trailing slash, or a usage error naming `option`. */
function httpUrl(url: string, option: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${option} ${url}: not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new UsageError(`${option} ${url}: expected an https:// (or http://) URL`);
  if (parsed.search || parsed.username)
    throw new UsageError(`${option} ${url}: no query string or credentials in the URL`);
  return parsed.href.replace(/\/+$/, '');
}

/**
 * The caller's credentials for the admin API: for npm start's (a loopback URL) the `CATALOGUE_ADMIN_*` ones it
 * prints, else the SDK's chain (environment, profile, SSO, web identity, container or instance metadata).
 */
async function adminCredentials(url: string, env: Env): Promise<CredentialSource | undefined> {
  const accessKeyId = env.CATALOGUE_ADMIN_ACCESS_KEY_ID;
  const secretAccessKey = env.CATALOGUE_ADMIN_SECRET_ACCESS_KEY;
  if (isLoopback(url) && accessKeyId && secretAccessKey) {
    const sessionToken = env.CATALOGUE_ADMIN_SESSION_TOKEN;
    const credentials = { accessKeyId, secretAccessKey, ...(sessionToken && { sessionToken }) };
    return () => credentials;
  }
  const chain = credentialProvider(undefined);
  const found = await chain().catch(() => undefined);
  return found && chain;
}

/** The admin target: its URL, the region it signs for, the caller's credentials; or why it is skipped. */
async function adminTarget(
  url: string | undefined,
  options: TargetOptions,
  env: Env,
): Promise<AdminTarget | { skip: string }> {
  if (!url) return { skip: 'no admin URL (--admin-url, CATALOGUE_ADMIN_URL or --stack)' };
  const adminUrl = httpUrl(url, '--admin-url');
  const credentials = await adminCredentials(adminUrl, env);
  if (!credentials) return { skip: 'no AWS credentials found to sign with (environment, profile, SSO…)' };
  const region =
    functionUrlRegion(adminUrl) ?? options.region ?? env.CATALOGUE_ADMIN_REGION ?? awsRegion(undefined, env);
  return { url: adminUrl, region, credentials };
}

/**
 * Resolve what to check; a usage error for what is missing or malformed.
 * @example await smokeTarget({ url: 'http://127.0.0.1:8787/v1', key: 'pk_live_…' }, process.env)
 */
export async function smokeTarget(
  options: TargetOptions,
  env: Env,
  readOutputs: typeof describeStackOutputs = describeStackOutputs,
): Promise<SmokeTarget> {
  if (options.stack && options.url) throw new UsageError('give --url or --stack, not both');
  const region = options.region ?? awsRegion(undefined, env);
  const outputs: StackOutputs = options.stack ? await readOutputs(options.stack, region) : {};
  if (options.stack && !outputs.ApiUrl)
    throw new UsageError(`--stack ${options.stack}: no ApiUrl output (is it this project's stack?)`);
  const url = options.url ?? outputs.ApiUrl ?? env.CATALOGUE_URL;
  if (!url) throw new UsageError('what to check: --url URL (or CATALOGUE_URL), or --stack NAME');
  const key = options.key ?? env.CATALOGUE_KEY;
  if (!key) throw new UsageError('a key to read with: --key KEY (or CATALOGUE_KEY)');
  const api = httpUrl(url, '--url');
  const docs = outputs.ReferenceUrl ?? `${new URL(api).origin}/docs`;
  const uri = options.catalogue ?? outputs.CatalogueUri;
  return {
    api: { api, docs, key },
    admin: await adminTarget(
      options['admin-url'] ?? outputs.AdminApiUrl ?? env.CATALOGUE_ADMIN_URL,
      options,
      env,
    ),
    catalogue: uri
      ? // npm start's S3 (its export lines) only for a location given here, never for a stack's.
        { uri, endpoint: options.endpoint ?? (options.catalogue ? env.CATALOGUE_S3_ENDPOINT : undefined) }
      : { skip: 'no catalogue location (--catalogue s3://bucket/prefix, or --stack)' },
  };
}
