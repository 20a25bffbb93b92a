/**
 * `createProxy`: the proxy wired to the clients HOT_PATH_CLIENT names — lean signed requests (the default,
 * and all the Lambda function carries: proxy/lambda.ts), or the AWS SDK's clients — for `npm start`, the
 * tests and the benchmarks. Off Lambda the lean clients sign with the SDK's credential chain (a profile, SSO…);
 * the function signs with the credentials Lambda puts in its environment.
 */
import { credentialProvider, dynamoClient, s3Client } from '../aws/sdk.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { type ConfigOutcome, DEFAULT_HOT_PATH_CLIENT } from './config.js';
import type { ProxyHandler } from './core/types.js';
import { SdkCounterTransport } from './quota/dynamo-transport.js';
import { leanClients, type ProxyOverrides, type RequestPathClients, wireProxy } from './wiring.js';

export { logJson } from './log/sink.js';
export { cachedKeys, type ProxyOverrides } from './wiring.js';

/** The SDK's clients for the object read, key lookups and metering; the cursor secret stays a lean call. */
const sdkClients: RequestPathClients = {
  objects: (c) => new S3ObjectStore({ client: s3Client({ endpoint: c.s3Endpoint }), bucket: c.bucket }),
  dynamo: (c) => new SdkCounterTransport(dynamoClient({ endpoint: c.dynamodbEndpoint })),
  cursorSecret: (c, arn) => leanClients(credentialProvider).cursorSecret(c, arn),
};

/**
 * The proxy for a configuration. An incomplete configuration still yields a handler: it answers
 * `503 configuration_error` (after 405 and the Authorization header checks) and the problems are logged once.
 * @example const handle = createProxy(loadConfig());
 */
export function createProxy(config: ConfigOutcome, overrides: ProxyOverrides = {}): ProxyHandler {
  const client = config.ok
    ? (config.config.hotPathClient ?? DEFAULT_HOT_PATH_CLIENT)
    : DEFAULT_HOT_PATH_CLIENT;
  return wireProxy(config, client === 'sdk' ? sdkClients : leanClients(credentialProvider), overrides);
}
