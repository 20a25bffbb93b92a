/**
 * The Lambda entry point (function URL with response streaming). Configuration is read and clients are
 * built once per execution environment; each invocation only runs the core. The request path's one client,
 * lean signed requests (aws/signed.ts), signs with the role's credentials that Lambda puts in the environment;
 * the AWS SDK is not in the bundle (infra/proxy-function.ts).
 */
import { roleCredentials } from '../aws/env.js';
import { createLambdaHandler } from './adapters/lambda.js';
import { loadConfig } from './config.js';
import { wireProxy } from './wiring.js';

export const handler = createLambdaHandler(wireProxy(loadConfig(), roleCredentials));
