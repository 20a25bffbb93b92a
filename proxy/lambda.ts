/**
 * The Lambda entry point (function URL with response streaming). Configuration is read and clients are
 * built once per execution environment; each invocation only runs the core.
 */
import { createLambdaHandler } from './adapters/lambda.js';
import { createProxy } from './app.js';
import { loadConfig } from './config.js';

export const handler = createLambdaHandler(createProxy(loadConfig()));
