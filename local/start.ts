/**
 * `npm start`: the whole product on one machine. Starts s3rver and dynalite in-process (data under
 * `.local/`) unless S3_ENDPOINT / DYNAMODB_ENDPOINT name existing servers, creates the bucket and tables,
 * publishes the catalogue snapshot, seeds keys and serves the proxy core through the node:http adapter on
 * 127.0.0.1:PORT. Safe to run again and again on the same `.local/`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, relative, resolve } from 'node:path';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { dynamoClient, s3Client, silenceSdkNodeVersionWarning } from '../aws/sdk.js';
import { publishSnapshot } from '../builder/publish-snapshot.js';
import { explainPublishFailure } from '../builder/report/failure.js';
import { firstPublishNotice, publishProgress, summaryLine } from '../builder/report/progress.js';
import { formatProblem } from '../builder/snapshot/problems.js';
import { createHttpServer } from '../proxy/adapters/http.js';
import { type AdminOptions, issueKey, partnerDefaults, registerKey } from '../proxy/admin/keys.js';
import { createTables } from '../proxy/admin/tables.js';
import { createProxy, logJson } from '../proxy/app.js';
import { loadConfig } from '../proxy/config.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { parseDevKeys } from './dev-keys.js';
import { withReference } from './docs.js';
import { localCommandHints } from './hints.js';
import { type LocalServer, startDynamo, startS3 } from './servers.js';

silenceSdkNodeVersionWarning();

const ROOT = resolve(import.meta.dirname, '..');
// Local state (s3rver and dynalite data, the cursor secret); tests point it at a temporary directory.
const LOCAL = resolve(process.env.CATALOGUE_LOCAL_DIR ?? join(ROOT, '.local'));

/** A cursor secret that survives restarts, so cursors from a previous run keep working. */
function localCursorSecret(): string {
  const file = join(LOCAL, 'cursor-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

async function ensureBucket(endpoint: string, bucket: string): Promise<void> {
  const client = s3Client({ endpoint });
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
  } finally {
    client.destroy();
  }
}

async function main(): Promise<void> {
  const env = process.env;
  const port = Number(env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('PORT must be a port number');
  const devKeys = parseDevKeys(env.CATALOGUE_DEV_KEYS);
  const source = resolve(env.CATALOGUE_SOURCE ?? join(ROOT, 'fixtures/catalogue'));
  mkdirSync(LOCAL, { recursive: true });

  const servers: LocalServer[] = [];
  let http: Server | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping`);
    const timer = setTimeout(() => process.exit(0), 3000);
    timer.unref();
    if (http) {
      http.closeAllConnections();
      await new Promise((done) => http?.close(done));
    }
    for (const server of servers) await server.stop().catch(() => {});
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  // 1. Storage: existing servers when named, otherwise our own on ephemeral loopback ports.
  const bucket = env.CATALOGUE_BUCKET ?? 'catalogue';
  let s3Endpoint = env.S3_ENDPOINT;
  if (!s3Endpoint) {
    const s3 = await startS3(bucket, { directory: join(LOCAL, 's3') });
    servers.push(s3);
    s3Endpoint = s3.endpoint;
  } else {
    await ensureBucket(s3Endpoint, bucket);
  }
  let dynamodbEndpoint = env.DYNAMODB_ENDPOINT;
  if (!dynamodbEndpoint) {
    mkdirSync(join(LOCAL, 'dynamodb'), { recursive: true });
    const dynamo = await startDynamo({ directory: join(LOCAL, 'dynamodb') });
    servers.push(dynamo);
    dynamodbEndpoint = dynamo.endpoint;
  }
  const configured = loadConfig({
    ...env,
    CATALOGUE_BUCKET: bucket,
    CATALOGUE_PREFIX: env.CATALOGUE_PREFIX ?? '',
    S3_ENDPOINT: s3Endpoint,
    DYNAMODB_ENDPOINT: dynamodbEndpoint,
    KEYS_TABLE: env.KEYS_TABLE ?? 'catalogue-keys',
    COUNTERS_TABLE: env.COUNTERS_TABLE ?? 'catalogue-counters',
    CURSOR_SECRET: env.CURSOR_SECRET ?? localCursorSecret(),
    // A publish shows up within a second locally.
    POINTER_TTL_MS: env.POINTER_TTL_MS ?? '1000',
  });
  if (!configured.ok) throw new Error(`configuration: ${configured.problems.join('; ')}`);
  const config = configured.config;

  // 2. Catalogue: validate and publish (incremental: a second start uploads nothing).
  // Progress on stderr (a bar on a terminal, a line every 5 s in a log); a big first publish takes minutes.
  const s3 = s3Client({ endpoint: config.s3Endpoint, maxAttempts: 5 });
  const target = `s3://${config.bucket}/${config.prefix}`;
  const progress = publishProgress(process.stderr);
  let outcome: Awaited<ReturnType<typeof publishSnapshot>>;
  try {
    outcome = await publishSnapshot(
      source,
      { store: new S3ObjectStore({ client: s3, bucket: config.bucket }), prefix: config.prefix },
      {
        progress,
        warn: (message) => console.error(`warning: ${message}`),
        onValid: (snapshot, current) => {
          const notice = firstPublishNotice(snapshot.modules.length);
          if (notice && !current.pointer) console.error(notice);
        },
      },
    );
  } finally {
    progress.close();
    s3.destroy();
  }
  if (!outcome.ok && outcome.reason === 'invalid') {
    for (const problem of outcome.problems) console.error(formatProblem(problem));
    throw new Error(`the snapshot in ${source} is not valid (${outcome.problems.length} problems)`);
  }
  if (!outcome.ok) {
    const { advice } = explainPublishFailure(outcome.error, {
      description: target,
      endpoint: config.s3Endpoint,
      again: 'start again',
    });
    throw new Error(
      `publishing ${source} to ${target} failed: ${(outcome.error as Error).message}; ${advice}`,
      { cause: outcome.error },
    );
  }
  const { summary } = outcome;
  console.error(summaryLine(summary, target));

  // 3. Keys: tables, the keys named in CATALOGUE_DEV_KEYS, and one fresh free key.
  const admin: AdminOptions = {
    client: dynamoClient({ endpoint: config.dynamodbEndpoint }),
    keysTable: config.keysTable,
    countersTable: config.countersTable,
  };
  await createTables(admin.client, admin);
  for (const { tier, key } of devKeys) {
    await registerKey(admin, key, {
      tier,
      label: 'CATALOGUE_DEV_KEYS',
      ...(tier === 'partner' ? { limits: partnerDefaults(env) } : {}),
    });
  }
  const fresh = await issueKey(admin, { tier: 'free', label: 'npm start' });
  admin.client.destroy();

  // 4. Serve.
  // /docs: the API reference page, without a key (local/docs.ts); everything else is the proxy's.
  http = createHttpServer(withReference(createProxy(configured, { log: logJson })));
  await new Promise<void>((ready, fail) => {
    http?.once('error', fail);
    http?.listen(port, '127.0.0.1', () => ready());
  });
  const address = http.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const base = `http://127.0.0.1:${boundPort}/v1`;
  const lines = [
    '',
    `Catalogue Read API ready at ${base}`,
    `Catalogue: ${summary.objects.total} objects from ${source}`,
    `Local S3: ${config.s3Endpoint} (bucket ${config.bucket}); DynamoDB: ${config.dynamodbEndpoint} (tables ${config.keysTable}, ${config.countersTable})`,
    devKeys.length > 0 ? `Seeded ${devKeys.length} key(s) from CATALOGUE_DEV_KEYS.` : undefined,
    `A fresh free-tier dev key (${fresh.record.keyId}): ${fresh.key}`,
    'Try:',
    `  curl -s -H "Authorization: Bearer ${fresh.key}" "${base}/modules?limit=2"`,
    ...localCommandHints({
      source: relative(ROOT, source) || '.',
      s3Endpoint,
      bucket: config.bucket,
      prefix: config.prefix,
      dynamodbEndpoint,
      keysTable: config.keysTable,
      countersTable: config.countersTable,
    }),
    'Ctrl-C stops it.',
    '',
  ];
  process.stdout.write(`${lines.filter((line) => line !== undefined).join('\n')}\n`);
}

main().catch((error: unknown) => {
  console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
