/**
 * `createProxy`: the proxy for `npm start`, the tests and the benchmarks, wired exactly as the Lambda function
 * is (proxy/lambda-entry.ts): the request path's one client, lean signed requests (aws/signed.ts). Off Lambda they
 * sign with the SDK's credential chain (a profile, SSO…; loopback credentials for a local server); the function
 * signs with the credentials Lambda puts in its environment.
 */
import { credentialProvider } from '../aws/sdk.js';
import type { ConfigOutcome } from './config.js';
import type { ProxyHandler } from './core/types.js';
import { type ProxyOverrides, wireProxy } from './wiring.js';

export { logJson } from './log/sink.js';
export { cachedKeys, type ProxyOverrides } from './wiring.js';

/**
 * The proxy for a configuration. An incomplete configuration still yields a handler: it answers
 * `503 configuration_error` (after 405 and the Authorization header checks) and the problems are logged once.
 * @example const handle = createProxy(loadConfig());
 */
export function createProxy(config: ConfigOutcome, overrides: ProxyOverrides = {}): ProxyHandler {
  return wireProxy(config, credentialProvider, overrides);
}
