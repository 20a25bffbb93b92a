/**
 * The deployed world of the proofs that put faults between the proxy and its dependencies
 * (test/proof/faults.test.ts, test/proof/integrity.test.ts): s3rver and dynalite on loopback, the keys and
 * counters tables with partner keys in them, a generated catalogue published into s3rver; and the proxy as
 * the stack configures it, over whatever endpoints stand in front of those servers.
 */

import { type LocalS3, type LocalServer, startDynamo, startS3 } from '@catalogue/local-aws';
import fc from 'fast-check';
import { createTables } from '../../admin/tables.js';
import { dynamoClient, leanDynamo, s3Client } from '../../aws/sdk.js';
import { publishCatalogue } from '../../builder/publish/publish.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyHandler, RequestLogLine } from '../../proxy/core/types.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import type { TableNames } from '../../tables/schema.js';
import { snapshotArb } from '../oracle/arbitraries.js';
import { CURSOR_SECRET } from '../oracle/harness.js';
import { registerKey } from './admin.js';

export interface DeployedSettings {
  bucket: string;
  prefix: string;
  tables: TableNames;
}

export interface DeployedWorld {
  s3: LocalS3;
  dynamo: LocalServer;
  /** The catalogue published under `prefix`. */
  snapshot: Snapshot;
}

/**
 * Start s3rver (with `bucket`) and dynalite, create the tables, register `keys` as partner keys with limits
 * no proof reaches, and publish the generated catalogue `catalogue` names (its size and seed) under `prefix`.
 */
export async function startDeployedWorld(
  settings: DeployedSettings & {
    keys: readonly string[];
    catalogue: { minModules: number; maxModules: number; seed: number };
  },
): Promise<DeployedWorld> {
  const { bucket, prefix, tables } = settings;
  const [s3, dynamo] = await Promise.all([startS3(bucket), startDynamo()]);
  const client = dynamoClient({ endpoint: dynamo.endpoint });
  await createTables(client, tables);
  const lean = leanDynamo(dynamo.endpoint);
  for (const key of settings.keys) {
    await registerKey({ dynamo: lean, ...tables }, key, {
      tier: 'partner',
      limits: { minute: 100_000, month: 1e9 },
    });
  }
  await lean.close();
  client.destroy();
  const { minModules, maxModules, seed } = settings.catalogue;
  const snapshot = fc.sample(snapshotArb({ minModules, maxModules }), { numRuns: 1, seed })[0]!;
  const writer = s3Client({ endpoint: s3.endpoint });
  await publishCatalogue({ store: new S3ObjectStore({ client: writer, bucket }), prefix, snapshot });
  writer.destroy();
  return { s3, dynamo, snapshot };
}

/**
 * The proxy as deployed (`proxy/app.ts`, configured from the environment the stack sets) over the endpoints
 * given, its request log lines into `logs`; `env` adds the suite's own settings (timeouts, TTLs, caches).
 */
export function deployedProxy(options: {
  settings: DeployedSettings;
  endpoints: { s3: string; dynamodb: string };
  env: Record<string, string>;
  logs: RequestLogLine[];
  now?: () => Date;
}): ProxyHandler {
  const { settings, endpoints, logs, now } = options;
  const config = loadConfig({
    CATALOGUE_BUCKET: settings.bucket,
    CATALOGUE_PREFIX: settings.prefix,
    S3_ENDPOINT: endpoints.s3,
    DYNAMODB_ENDPOINT: endpoints.dynamodb,
    KEYS_TABLE: settings.tables.keysTable,
    COUNTERS_TABLE: settings.tables.countersTable,
    CURSOR_SECRET,
    ...options.env,
  });
  if (!config.ok) throw new Error(config.problems.join('; '));
  // Request lines only: the wiring's own lines (configuration, the cursor secret) go to the same logger.
  return createProxy(config, { log: (line) => 'status' in line && logs.push(line), ...(now && { now }) });
}
