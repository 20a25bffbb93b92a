/**
 * `npm start`: the whole product on one machine. Checks its port first; starts s3rver and dynalite on a thread
 * of their own, on the ports they had before (local/own-servers.ts; data under `.local/`, or
 * CATALOGUE_LOCAL_DIR) unless S3_ENDPOINT / DYNAMODB_ENDPOINT name existing servers, creates the bucket and
 * tables, publishes the catalogue snapshot when it has to (local/published.ts), seeds keys and serves the
 * proxy core through the node:http adapter on 127.0.0.1:PORT.
 *
 * The local loop keeps the publisher's work: a restart serves what is published (a publish into the running
 * stack survives it); the source is published only into an empty data directory, or when the source named in
 * CATALOGUE_SOURCE changed since it was published there. A second `npm start` on a data directory in use
 * refuses before touching anything (local/lock.ts). The free-tier dev key is issued once per data directory
 * and re-used (local/dev-keys.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { type LocalS3, type LocalServer, recordedUploader } from '@catalogue/local-aws';
import { register } from '../admin/actions.js';
import { AdminTables } from '../admin/dynamo.js';
import { partnerDefaults } from '../admin/settings.js';
import { createTables } from '../admin/tables.js';
import { integerSetting, LOOPBACK_CREDENTIALS } from '../aws/env.js';
import { forgetLocalStack, localDataDirectory, recordLocalStack } from '../aws/local-stack.js';
import { dynamoClient, leanDynamo, s3Client } from '../aws/sdk.js';
import { whoAmI } from '../builder/exit.js';
import { publishSnapshot, type SnapshotTarget } from '../builder/publish-snapshot.js';
import { explainPublishFailure } from '../builder/report/failure.js';
import { firstPublishNotice, formatBytes, summaryLine } from '../builder/report/progress.js';
import { publishProgress } from '../builder/report/terminal.js';
import { formatProblem } from '../builder/snapshot/problems.js';
import { sourceDigest } from '../builder/snapshot/source.js';
import { createHttpServer } from '../proxy/adapters/http.js';
import { createProxy, logJson } from '../proxy/app.js';
import { type ConfigOutcome, loadConfig, type ProxyConfig } from '../proxy/config.js';
import { errorMessage } from '../store/errors.js';
import { POINTER_KEY } from '../store/layout.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { parsePointer } from '../store/pointer.js';
import { FREE_TIER_LIMITS, generateApiKey } from '../tables/keys.js';
import { type LocalAdmin, localAdminLines, startLocalAdmin } from './admin.js';
import { DEV_KEY_FILE, type DevKeyOutcome, devKeyFor, parseDevKeys } from './dev-keys.js';
import { localDiskFor, localDiskForModules } from './disk.js';
import { withReference } from './docs.js';
import { localCommandHints, partnerKeyHint, pasteLines, uploadHints } from './hints.js';
import { LOCK_FILE, type LockHolder, lockDataDirectory, lockHolder } from './lock.js';
import { type ServerLayout, serverLayout, startOwnServers } from './own-servers.js';
import { explainPortInUse, listenOrExplain, portFree } from './port.js';
import {
  decideStart,
  type PublishedState,
  readPublishedRecord,
  servedFrom,
  writePublishedRecord,
} from './published.js';
import { startUploadLoop } from './uploads.js';

const ROOT = resolve(import.meta.dirname, '..');
// Local state (s3rver and dynalite data, the cursor secret, the lock, the publish record and the dev key);
// tests point it at a temporary directory.
const LOCAL = localDataDirectory(process.env, ROOT);
const FIXTURE = join(ROOT, 'fixtures/catalogue');

/** A path as the user would type it from the repository root (where npm runs): relative inside it. */
function display(path: string): string {
  const inside = relative(ROOT, path);
  return inside.startsWith('..') || isAbsolute(inside) ? path : inside || '.';
}

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

function inUse({ pid, host, since }: LockHolder): Error {
  return new Error(
    `the data directory ${LOCAL} is in use by another npm start (process ${pid} on ${host}, since ${since}). ` +
      'Use that one, stop it first (Ctrl-C in its terminal), or start this one on another directory: ' +
      `CATALOGUE_LOCAL_DIR=/tmp/other npm start. If no npm start is running, remove ${join(LOCAL, LOCK_FILE)}.`,
  );
}

/** Take the data directory, or refuse at once: nothing has been started or written yet. */
function lockOrRefuse(): void {
  mkdirSync(LOCAL, { recursive: true });
  const lock = lockDataDirectory(LOCAL);
  if (!lock.ok) throw inUse(lock.holder);
  process.on('exit', lock.release);
}

/** What the checks settled from the environment, before anything is written, started or published. */
interface StartSettings {
  env: NodeJS.ProcessEnv;
  port: number;
  /** The admin API's port: PORT + 1 unless ADMIN_PORT says otherwise. */
  adminPort: number;
  devKeys: ReturnType<typeof parseDevKeys>;
  /** CATALOGUE_SOURCE names the source; else the fixture. */
  named: boolean;
  source: string;
  layout: ServerLayout;
}

/** One start: its settings and what is running, which a signal or a crash stops. */
interface StartContext extends StartSettings {
  servers: LocalServer[];
  http?: Server;
  admin?: LocalAdmin;
  stopping: boolean;
}

/** The storage this start serves from: its own servers or the named endpoints, and the proxy's configuration. */
interface Storage {
  configured: ConfigOutcome & { ok: true };
  config: ProxyConfig;
  s3Endpoint: string;
  dynamodbEndpoint: string;
  /** The local S3 is this start's own (its disk reported, its events taken as uploads). */
  ownS3: boolean;
  localS3: LocalS3 | undefined;
}

/** What the ready screen says is served. */
interface Served {
  version: string;
  from: string;
}

/**
 * `npm start` in its steps: the checks (nothing written or started before them), storage, the catalogue
 * published or served, keys, the admin API, the proxy, uploads taken, the ready screen.
 */
async function main(): Promise<void> {
  const start: StartContext = { ...(await checkBeforeAnything(process.env)), servers: [], stopping: false };
  process.on('SIGINT', () => void shutdown(start, 'SIGINT'));
  process.on('SIGTERM', () => void shutdown(start, 'SIGTERM'));
  const storage = await startStorage(start);
  const served = await publishOrServe(start, storage.config, storage.ownS3);
  const devKey = await seedKeys(start, storage.config);
  start.admin = await startAdmin(start, storage.config);
  const base = await serve(start, storage.configured);
  const uploads = takeUploads(storage, served);
  recordStack(storage, base);
  process.stdout.write(readyScreen(start, { storage, served, devKey, base, uploads }));
}

/**
 * What this start serves, in the data directory while it runs (aws/local-stack.ts): the commands given no target
 * (`npm run catalogue -- upload | versions | rollback | unlock`, `npm run keys`) act on it.
 */
function recordStack({ config, s3Endpoint, dynamodbEndpoint }: Storage, base: string): void {
  recordLocalStack(LOCAL, {
    pid: process.pid,
    s3: s3Endpoint,
    bucket: config.bucket,
    prefix: config.prefix,
    dynamodb: dynamodbEndpoint,
    keysTable: config.keysTable,
    countersTable: config.countersTable,
    api: base,
  });
  process.on('exit', () => forgetLocalStack(LOCAL, process.pid));
}

/**
 * A port from the environment (0: any free one), by the one rule of integer settings (aws/env.ts); a
 * fallback past the last port (ADMIN_PORT after PORT=65535) must be set instead.
 */
function portSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const ports = { fallback, min: 0, max: 65_535 };
  const read = integerSetting(env, name, ports);
  if (!read.ok) throw new Error(read.problem);
  if (read.value > ports.max) throw new Error(`${name} must be set: the default, ${fallback}, is not a port`);
  return read.value;
}

/**
 * Before anything is written, started or published: the settings, the data directory (its holder also holds
 * the port), then the ports (the listen at the end says the same if one is taken meanwhile); then the lock.
 */
async function checkBeforeAnything(env: NodeJS.ProcessEnv): Promise<StartSettings> {
  refuseOldNode(process.versions.node);
  const port = portSetting(env, 'PORT', 8787);
  const devKeys = parseDevKeys(env.CATALOGUE_DEV_KEYS);
  const named = Boolean(env.CATALOGUE_SOURCE?.trim());
  const source = resolve(named ? env.CATALOGUE_SOURCE!.trim() : FIXTURE);
  const layout = serverLayout(env.CATALOGUE_LOCAL_SERVERS);
  const holder = lockHolder(LOCAL);
  if (holder) throw inUse(holder);
  // The admin API's port: PORT + 1 unless ADMIN_PORT says otherwise (a suggested PORT leaves room for it).
  const adminPort = portSetting(env, 'ADMIN_PORT', port === 0 ? 0 : port + 1);
  if (port !== 0 && !(await portFree(port)))
    throw new Error(await explainPortInUse(port, 'PORT', env.ADMIN_PORT === undefined ? 2 : 1));
  if (adminPort !== 0 && !(await portFree(adminPort)))
    throw new Error(await explainPortInUse(adminPort, 'ADMIN_PORT'));
  lockOrRefuse();
  return { env, port, adminPort, devKeys, named, source, layout };
}

/**
 * The servers' threads load TypeScript through tsx's hooks, which reach worker threads from Node.js 22 on: on an
 * older one (a stock Node.js 20 where npm ci installed no node-<platform>-<arch> package, docs/design.md) the
 * first thread would fail with "Unknown file extension .ts". Said in one line instead, before anything starts.
 */
function refuseOldNode(version: string): void {
  if (Number(version.split('.')[0]) >= 22) return;
  throw new Error(
    `Node.js ${version} is older than it runs on (22 or newer): npm ci installs the Lambda functions' ` +
      'Node.js 24 on Linux (x64, arm64); elsewhere install Node.js 24 (`nvm install` ' +
      'reads .nvmrc), then run npm start again',
  );
}

/** Stop what runs (the proxy, the admin API, our own servers) and exit; at most 3 s. */
async function shutdown(start: StartContext, signal: string, code = 0): Promise<void> {
  if (start.stopping) return;
  start.stopping = true;
  console.error(`\n${signal}: stopping`);
  const timer = setTimeout(() => process.exit(code), 3000);
  timer.unref();
  const { http, admin } = start;
  if (http) {
    http.closeAllConnections();
    await new Promise((done) => http.close(done));
  }
  admin?.server.closeAllConnections();
  admin?.server.close();
  for (const server of start.servers) await server.stop().catch(() => {});
  process.exit(code);
}

/** Storage: existing servers when named, otherwise our own on loopback, on the ports of the last start. */
async function startStorage(start: StartContext): Promise<Storage> {
  const { env } = start;
  const bucket = env.CATALOGUE_BUCKET ?? 'catalogue';
  let s3Endpoint = env.S3_ENDPOINT;
  const own = await startOwnServers(
    { bucket: s3Endpoint ? undefined : bucket, dynamodb: !env.DYNAMODB_ENDPOINT },
    {
      local: LOCAL,
      layout: start.layout,
      onCrash: (error) => void shutdown(start, `npm start failed: ${error.message}`, 1),
      note: (line) => console.error(line),
    },
  );
  const ownS3 = !s3Endpoint;
  let localS3: LocalS3 | undefined;
  if (!s3Endpoint) {
    const s3 = own.s3!;
    localS3 = s3;
    start.servers.push(s3);
    s3Endpoint = s3.endpoint;
  } else {
    await ensureBucket(s3Endpoint, bucket);
  }
  let dynamodbEndpoint = env.DYNAMODB_ENDPOINT;
  if (!dynamodbEndpoint) {
    const dynamo = own.dynamodb!;
    start.servers.push(dynamo);
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
  const { config } = configured;
  return { configured, config, s3Endpoint, dynamodbEndpoint, ownS3, localS3 };
}

/** Catalogue: publish the source only when it has to (local/published.ts), else serve what is published. */
async function publishOrServe(start: StartContext, config: ProxyConfig, ownS3: boolean): Promise<Served> {
  const { named, source } = start;
  const s3 = s3Client({ endpoint: config.s3Endpoint, maxAttempts: 5 });
  const store = new S3ObjectStore({ client: s3, bucket: config.bucket });
  const target = `s3://${config.bucket}/${config.prefix}`;
  try {
    const state = await publishedState(store, config.prefix);
    const record = readPublishedRecord(LOCAL);
    const digest = named || !record ? await sourceDigest(source) : undefined;
    const decision = decideStart(state, { path: source, named, ...(digest && { digest }) }, record);
    if (decision.publish) {
      console.error(`publishing ${display(source)} to ${target}: ${decision.reason}`);
      const summary = await publish({
        source,
        into: { store, prefix: config.prefix },
        target,
        ownS3,
        endpoint: config.s3Endpoint,
      });
      writePublishedRecord(LOCAL, {
        source,
        digest: digest ?? (await sourceDigest(source)),
        version: summary.version,
        published_at: new Date().toISOString(),
      });
      return { version: summary.version, from: `published from ${display(source)} by npm start just now` };
    }
    const { version } = decision;
    if (named) console.error(`already current: ${version} to ${target}: 0 objects added; ${decision.reason}`);
    else console.error(`not publishing ${display(source)}: ${decision.reason}`);
    // The fixture moved on (a pull) while this directory still serves what npm start published from it.
    if (!named && record?.source === FIXTURE && record.version === version) {
      if ((await sourceDigest(FIXTURE)) !== record.digest) {
        console.error(
          `note: ${display(FIXTURE)} changed since npm start published it here; to publish it again: ` +
            `CATALOGUE_SOURCE=${display(FIXTURE)} npm start`,
        );
      }
    }
    return { version, from: servedFrom(version, record, display) };
  } finally {
    s3.destroy();
  }
}

/** What the target's pointer says: nothing published, a current version, or a pointer that cannot be read. */
async function publishedState(store: S3ObjectStore, prefix: string): Promise<PublishedState> {
  const pointer = await store.get(`${prefix}${POINTER_KEY}`);
  const parsed = pointer.ok ? parsePointer(pointer.body) : undefined;
  return !pointer.ok
    ? { pointer: 'none' }
    : parsed
      ? { pointer: 'current', version: parsed.version }
      : { pointer: 'unreadable' };
}

/** Keys: tables, the keys named in CATALOGUE_DEV_KEYS, and the dev key of this data directory. */
async function seedKeys(start: StartContext, config: ProxyConfig): Promise<DevKeyOutcome> {
  const names = { keysTable: config.keysTable, countersTable: config.countersTable };
  const client = dynamoClient({ endpoint: config.dynamodbEndpoint });
  await createTables(client, names).finally(() => client.destroy());
  const dynamo = leanDynamo(config.dynamodbEndpoint);
  const tables = new AdminTables({ dynamo, ...names });
  for (const { tier, key } of start.devKeys) {
    await register(tables, key, {
      tier,
      label: 'CATALOGUE_DEV_KEYS',
      limits: tier === 'partner' ? partnerDefaults(start.env) : FREE_TIER_LIMITS,
    });
  }
  const devKey = await devKeyFor(tables, LOCAL);
  await dynamo.close();
  return devKey;
}

/** The key-administration API (local/admin.ts), signed with local credentials. */
function startAdmin(start: StartContext, config: ProxyConfig): Promise<LocalAdmin> {
  return startLocalAdmin({
    env: start.env,
    dynamodbEndpoint: config.dynamodbEndpoint!,
    keysTable: config.keysTable,
    countersTable: config.countersTable,
    directory: LOCAL,
    port: start.adminPort,
  });
}

/**
 * Serve: /docs and /docs/admin, the reference pages, without a key (local/docs.ts); everything else is the
 * proxy's. Returns the API's base URL on the port it listens on.
 */
async function serve(start: StartContext, configured: ConfigOutcome): Promise<string> {
  const http = createHttpServer(withReference(createProxy(configured, { log: logJson })));
  start.http = http;
  await listenOrExplain(http, start.port);
  const address = http.address();
  const boundPort = typeof address === 'object' && address ? address.port : start.port;
  return `http://127.0.0.1:${boundPort}/v1`;
}

/**
 * Start taking uploads into this stack's S3 and watching for new versions (local/uploads.ts); the ready
 * screen's lines on them.
 */
function takeUploads(storage: Storage, served: Served): string[] {
  const { config } = storage;
  const store = new S3ObjectStore({
    // Its own S3 takes only the local credentials, whatever AWS_ACCESS_KEY_ID says.
    client: s3Client({
      endpoint: config.s3Endpoint,
      maxAttempts: 5,
      ...(storage.ownS3 && { credentials: LOOPBACK_CREDENTIALS }),
    }),
    bucket: config.bucket,
  });
  return startUploadLoop(
    { store, bucket: config.bucket, prefix: config.prefix },
    {
      onEvent: storage.localS3?.onEvent,
      known: served.version,
      servedWithinMs: config.pointerTtlMs,
      log: (line) => console.error(line),
      ...(storage.ownS3 && {
        uploaderOf: (key: string, etag: string) =>
          recordedUploader(join(LOCAL, 's3'), config.bucket, key, etag),
      }),
    },
  );
}

/**
 * The ready screen's lines on publishing into this stack: the keys and the build commands (local/hints.ts);
 * uploads (`uploads`: what takeUploads said), and how to make one.
 */
function publishingLines(start: StartContext, storage: Storage, uploads: readonly string[]): string[] {
  const { config, s3Endpoint } = storage;
  const fixture = start.source === FIXTURE;
  const source = fixture ? 'my-catalogue' : display(start.source);
  return [
    ...localCommandHints({
      source,
      ...(fixture && { copyFrom: display(FIXTURE) }),
      s3Endpoint,
      bucket: config.bucket,
      prefix: config.prefix,
    }),
    ...uploads,
    ...(storage.localS3
      ? uploadHints({ source, bucket: config.bucket, s3Endpoint, credentials: LOOPBACK_CREDENTIALS })
      : []),
  ];
}

/** What the ready screen shows of this start, once everything runs. */
interface Ready {
  storage: Storage;
  served: Served;
  devKey: DevKeyOutcome;
  /** The API's base URL. */
  base: string;
  /** The lines on uploads (takeUploads). */
  uploads: readonly string[];
}

/** The ready screen (stdout): what is served where, the dev key, the admin API, how to publish. */
function readyScreen(start: StartContext, ready: Ready): string {
  const { storage, served, devKey, base } = ready;
  const { env, devKeys } = start;
  const { config, s3Endpoint } = storage;
  const keyFile = display(join(LOCAL, DEV_KEY_FILE));
  const keyOrigin = devKey.reused
    ? `re-used from ${keyFile}`
    : `new, kept in ${keyFile}${devKey.replaced ? `; ${devKey.replaced} is no longer accepted` : ''}`;
  const lines = [
    '',
    `Catalogue Read API ready at ${base}`,
    `Catalogue: version ${served.version}, ${served.from}`,
    `Local S3: ${config.s3Endpoint} (bucket ${config.bucket}); DynamoDB: ${config.dynamodbEndpoint} (tables ${config.keysTable}, ${config.countersTable})`,
    `Data directory: ${LOCAL} (held by this npm start, process ${process.pid})`,
    devKeys.length > 0 ? `Seeded ${devKeys.length} key(s) from CATALOGUE_DEV_KEYS.` : undefined,
    `A free-tier dev key (${devKey.record.keyId}, ${keyOrigin}): ${devKey.key}`,
    'Paste into another shell:',
    ...pasteLines({ key: devKey.key, url: base, s3Endpoint }),
    ...(start.admin ? localAdminLines(start.admin) : []),
    ...partnerKeyHint({
      seeded: devKeys.filter(({ tier }) => tier === 'partner').length,
      limits: partnerDefaults(env),
      key: generateApiKey(),
      free: FREE_TIER_LIMITS,
    }),
    'Try:',
    `  curl -s -H "Authorization: Bearer ${devKey.key}" "${base}/modules?limit=2"`,
    ...publishingLines(start, storage, ready.uploads),
    'Ctrl-C stops it.',
    '',
  ];
  return `${lines.filter((line) => line !== undefined).join('\n')}\n`;
}

/**
 * Validate and publish `source` (incremental when the bucket holds a version already), with progress on
 * stderr (a bar on a terminal, a line every 5 s in a log) and, into our own s3rver, the disk it takes.
 */
async function publish(options: {
  source: string;
  into: SnapshotTarget;
  target: string;
  ownS3: boolean;
  endpoint: string | undefined;
}) {
  const { source, into, target, ownS3, endpoint } = options;
  const progress = publishProgress(process.stderr);
  let outcome: Awaited<ReturnType<typeof publishSnapshot>>;
  try {
    outcome = await publishSnapshot(source, into, {
      progress,
      record: { by: whoAmI(), via: 'npm start' },
      warn: (message) => console.error(`warning: ${message}`),
      onValid: (snapshot, current) => {
        const modules = snapshot.modules.length;
        const notice = firstPublishNotice(modules, ownS3 ? localDiskForModules(modules) : undefined);
        if (notice && !current.pointer) console.error(notice);
      },
    });
  } finally {
    progress.close();
  }
  if (!outcome.ok && outcome.reason === 'invalid') {
    for (const problem of outcome.problems) console.error(formatProblem(problem));
    throw new Error(`the snapshot in ${source} is not valid (${outcome.problems.length} problems)`);
  }
  if (!outcome.ok) {
    const { advice } = explainPublishFailure(outcome.error, {
      description: target,
      endpoint,
      again: 'start again',
    });
    throw new Error(`publishing ${source} to ${target} failed: ${errorMessage(outcome.error)}; ${advice}`);
  }
  const { summary } = outcome;
  console.error(summaryLine(summary, target));
  if (ownS3 && summary.objects.added > 0) {
    const disk = formatBytes(localDiskFor(summary.objects.added, summary.bytes.added));
    console.error(
      `wrote ${summary.objects.added.toLocaleString('en-US')} objects into ${display(join(LOCAL, 's3'))}: about ${disk} of disk`,
    );
  }
  return summary;
}

main().catch((error: unknown) => {
  console.error(`npm start failed: ${errorMessage(error)}`);
  process.exit(1);
});
