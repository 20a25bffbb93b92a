/**
 * What `npm run smoke` checks, from its options, the environment (the `export` lines `npm start` prints) or a
 * deployed stack's CloudFormation outputs (`--stack`, read with the SDK): the API and its reference page, the
 * key, the admin API with the caller's credentials, the catalogue location of the live version.
 *
 * The key comes from `CATALOGUE_KEY` only, never from the command line (npm prints the whole command line, and
 * shells keep it in their history); with `--stack` and no `CATALOGUE_KEY`, it is the stack's own check key,
 * read from its secret (`CheckKeySecretArn`). `--stack` needs read access only (docs/operating.md, "The smoke
 * check's permissions"): the admin API is checked signed only with `--admin`, otherwise unsigned.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { isLoopback } from '../aws/env.js';
import { awsRegion, credentialProvider } from '../aws/sdk.js';
import { getSecretString, secretsClient } from '../aws/secrets.js';
import type { CredentialSource } from '../aws/signed.js';
import { UsageError } from '../cli/kit.js';
import { errorMessage } from '../store/errors.js';
import { type AdminTarget, functionUrlRegion, type UnsignedAdminTarget } from './admin-check.js';
import type { ApiTarget } from './api-checks.js';
import type { CatalogueTarget } from './live-version.js';

/** The stack outputs the smoke check reads (infra/stack.ts names them; test/ops/target.test.ts checks). */
export const STACK_OUTPUTS = [
  'ApiUrl',
  'ReferenceUrl',
  'AdminApiUrl',
  'CatalogueUri',
  'Region',
  'CheckKeySecretArn',
] as const;
type StackOutputs = Partial<Record<(typeof STACK_OUTPUTS)[number], string>>;

/** The options `npm run smoke` takes that name what to check. */
export interface TargetOptions {
  url?: string | undefined;
  stack?: string | undefined;
  /** With `--stack`: sign the admin check with the caller's credentials (else it is the unsigned read). */
  admin?: boolean | undefined;
  region?: string | undefined;
  'admin-url'?: string | undefined;
  catalogue?: string | undefined;
  endpoint?: string | undefined;
}

export interface SmokeTarget {
  api: ApiTarget;
  admin: AdminTarget | UnsignedAdminTarget | { skip: string };
  catalogue: CatalogueTarget | { skip: string };
}

type Env = Record<string, string | undefined>;

/** How a target is read from AWS: a stack's outputs, a secret's value (stand-ins in tests). */
export interface TargetReaders {
  readOutputs: (stack: string, region: string) => Promise<Record<string, string>>;
  readSecret: (arn: string) => Promise<string>;
}

/** The check key's value, read with the SDK's default credentials (as `--stack`'s outputs are). */
export async function readSecretWithCaller(arn: string): Promise<string> {
  const client = secretsClient(arn, { credentials: credentialProvider(undefined) });
  try {
    return await getSecretString(client, arn, AbortSignal.timeout(10_000));
  } catch (error) {
    throw new UsageError(`the check key's secret (${arn}): ${errorMessage(error)}`);
  } finally {
    await client.close();
  }
}

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

/**
 * The admin target: its URL, the region it signs for, the caller's credentials; the unsigned read with
 * `--stack` but not `--admin`; or why it is skipped.
 */
async function adminTarget(
  url: string | undefined,
  options: TargetOptions,
  env: Env,
): Promise<AdminTarget | UnsignedAdminTarget | { skip: string }> {
  if (!url) return { skip: 'no admin URL (--admin-url, CATALOGUE_ADMIN_URL or --stack)' };
  const adminUrl = httpUrl(url, '--admin-url');
  if (options.stack && !options.admin) return { url: adminUrl, unsigned: true };
  const credentials = await adminCredentials(adminUrl, env);
  if (!credentials) return { skip: 'no AWS credentials found to sign with (environment, profile, SSO…)' };
  const region =
    functionUrlRegion(adminUrl) ?? options.region ?? env.CATALOGUE_ADMIN_REGION ?? awsRegion(undefined, env);
  return { url: adminUrl, region, credentials };
}

/** The key: CATALOGUE_KEY, else (with --stack) the stack's check key from its secret. */
async function keyOf(
  options: TargetOptions,
  env: Env,
  outputs: StackOutputs,
  readSecret: TargetReaders['readSecret'],
): Promise<string> {
  if (env.CATALOGUE_KEY) return env.CATALOGUE_KEY;
  if (options.stack && outputs.CheckKeySecretArn) return readSecret(outputs.CheckKeySecretArn);
  throw new UsageError(
    options.stack
      ? `a key to read with: CATALOGUE_KEY (the stack ${options.stack} has no CheckKeySecretArn output)`
      : "a key to read with: CATALOGUE_KEY=pk_live_… (or --stack, which reads the stack's check key)",
  );
}

/**
 * Resolve what to check; a usage error for what is missing or malformed.
 * @example await smokeTarget({ url: 'http://127.0.0.1:8787/v1' }, { CATALOGUE_KEY: 'pk_live_…' })
 */
export async function smokeTarget(
  options: TargetOptions,
  env: Env,
  readers: Partial<TargetReaders> = {},
): Promise<SmokeTarget> {
  const { readOutputs = describeStackOutputs, readSecret = readSecretWithCaller } = readers;
  if (options.stack && options.url) throw new UsageError('give --url or --stack, not both');
  if (options.admin && !options.stack) {
    throw new UsageError(
      '--admin applies with --stack (with --url, the admin API is signed when credentials are found)',
    );
  }
  const region = options.region ?? awsRegion(undefined, env);
  const outputs: StackOutputs = options.stack ? await readOutputs(options.stack, region) : {};
  if (options.stack && !outputs.ApiUrl)
    throw new UsageError(`--stack ${options.stack}: no ApiUrl output (is it this project's stack?)`);
  const url = options.url ?? outputs.ApiUrl ?? env.CATALOGUE_URL;
  if (!url) throw new UsageError('what to check: --url URL (or CATALOGUE_URL), or --stack NAME');
  const api = httpUrl(url, '--url');
  const key = await keyOf(options, env, outputs, readSecret);
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
