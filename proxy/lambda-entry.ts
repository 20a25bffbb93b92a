/**
 * The Lambda entry point (function URL with response streaming). Configuration is read and clients are
 * built once per execution environment; each invocation only runs the core. The request path's one client,
 * lean signed requests (aws/signed.ts), signs with the role's credentials that Lambda puts in the environment;
 * the AWS SDK is not in the bundle (infra/proxy-function.ts).
 */
import { environmentCredentials, isLoopback, LOOPBACK_CREDENTIALS } from '../aws/env.js';
import type { CredentialSource } from '../aws/signed.js';
import { createLambdaHandler } from './adapters/lambda.js';
import { loadConfig } from './config.js';
import { wireProxy } from './wiring.js';

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

export const handler = createLambdaHandler(wireProxy(loadConfig(), fromEnvironment));
