/**
 * The Lambda entry point (function URL with response streaming). Configuration is read and clients are
 * built once per execution environment; each invocation only runs the core. Only the lean clients are wired
 * (aws/signed.ts), signing with the role's credentials that Lambda puts in the environment; the AWS SDK is not
 * in the bundle (infra/proxy-function.ts), so HOT_PATH_CLIENT=sdk is a configuration error here.
 */
import { environmentCredentials, isLoopback, LOOPBACK_CREDENTIALS } from '../aws/env.js';
import type { CredentialSource } from '../aws/signed.js';
import { createLambdaHandler } from './adapters/lambda.js';
import { type ConfigOutcome, loadConfig } from './config.js';
import { leanClients, wireProxy } from './wiring.js';

/** The role's credentials, read once (Lambda sets them for the execution environment's lifetime). */
function fromEnvironment(endpoint: string | undefined): CredentialSource {
  if (isLoopback(endpoint)) return () => LOOPBACK_CREDENTIALS;
  let credentials = environmentCredentials();
  return () => {
    credentials ??= environmentCredentials();
    if (!credentials)
      throw new Error('no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)');
    return credentials;
  };
}

/** The configuration, with the one client the bundle does not carry refused by name. */
function functionConfig(): ConfigOutcome {
  const config = loadConfig();
  if (config.ok && config.config.hotPathClient === 'sdk')
    return { ok: false, problems: ['HOT_PATH_CLIENT=sdk: the Lambda function carries only the lean client'] };
  return config;
}

export const handler = createLambdaHandler(wireProxy(functionConfig(), leanClients(fromEnvironment)));
