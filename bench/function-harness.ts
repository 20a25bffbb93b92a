/**
 * Section 10's harness: the loopback stand-ins of S3 and Secrets Manager, the runtime interface client and
 * how a runtime process is timed from spawn to its first answer, the child process of the CPU and memory
 * figures, and the flood's request lines.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { register } from '../admin/actions.js';
import { AdminTables } from '../admin/dynamo.js';
import { createTables } from '../admin/tables.js';
import { dynamoClient, leanDynamo } from '../aws/sdk.js';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { errorMessage } from '../store/errors.js';
import { DirectoryObjectStore } from '../store/objects/directory.js';
import { MODULE_FIELDS } from '../store/schema.js';
import { progress } from './report.js';
import { type Invocation, type RuntimeApi, startRuntimeApi } from './runtime-api.js';
import { BENCH_DIR, BENCH_KEY, HUGE_LIMITS, WORK } from './settings.js';

export const BUCKET = 'bench-catalogue';
export const TABLES = { keysTable: 'fn-keys', countersTable: 'fn-counters' };
export const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:cursor-AbCdEf';
/**
 * The function's two tables on the DynamoDB at `endpoint`, and the bench key in them, with `moreKeys` (section
 * 10's flood keys) beside it: partner, limits no run reaches.
 */
export async function seedBenchKey(endpoint: string, moreKeys: readonly string[] = []): Promise<void> {
  const client = dynamoClient({ endpoint });
  const lean = leanDynamo(endpoint);
  try {
    await createTables(client, TABLES);
    const tables = new AdminTables({ dynamo: lean, ...TABLES });
    for (const key of [BENCH_KEY, ...moreKeys]) {
      await register(tables, key, { tier: 'partner', limits: HUGE_LIMITS, label: 'bench' });
    }
  } finally {
    await lean.close();
    client.destroy();
  }
}

/** A bench proxy function's environment as Lambda sets it (512 MB, the role's keys), its dependencies at these endpoints. */
export function benchFunctionEnv(endpoints: {
  s3: string;
  dynamodb: string;
  secrets: string;
}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_SESSION_TOKEN: 'bench',
    AWS_LAMBDA_FUNCTION_NAME: 'bench',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    CATALOGUE_BUCKET: BUCKET,
    CATALOGUE_PREFIX: '',
    KEYS_TABLE: TABLES.keysTable,
    COUNTERS_TABLE: TABLES.countersTable,
    CURSOR_SECRET_ARN: SECRET_ARN,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secrets,
  };
}

/** The cursor key the Secrets Manager stand-in holds. */
export const STAND_IN_CURSOR_SECRET = 's'.repeat(64);
export const RIC_VERSION = '4.0.2';
/** The heap limits Lambda's Node.js runtime passes at 512 MB (its bootstrap: new space = memory / 10). */
export const LAMBDA_512_FLAGS = ['--expose-gc', '--max-semi-space-size=25', '--max-old-space-size=461'];

/** aws-lambda-ric, installed once under .work (its install script builds the native Runtime API client). */
export async function runtimeInterfaceClient(): Promise<string | undefined> {
  const prefix = join(WORK, `ric-${RIC_VERSION}`);
  const entry = join(prefix, 'node_modules', 'aws-lambda-ric', 'index.mjs');
  const native = join(prefix, 'node_modules', 'aws-lambda-ric', 'rapid-client.node');
  if (!existsSync(native)) {
    progress(`10. installing aws-lambda-ric ${RIC_VERSION} into ${prefix}`);
    await promisify(execFile)(
      'npm',
      ['install', '--prefix', prefix, '--no-save', `aws-lambda-ric@${RIC_VERSION}`],
      {
        timeout: 600_000,
      },
    ).catch((error: unknown) => progress(`10. aws-lambda-ric did not install: ${errorMessage(error)}`));
  }
  return existsSync(native) ? entry : undefined;
}

/** Where the S3 stand-in answers how many object GETs it has served (not an S3 path: no bucket). */
export const READS_PATH = '/__reads';

/**
 * A loopback S3 that serves a published directory: GET with Range and If-None-Match, as the proxy reads; and
 * at {@link READS_PATH} the number of GETs it has served so far.
 */
export async function startS3StandIn(root: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const store = new DirectoryObjectStore(root);
  let reads = 0;
  const server: Server = createServer(async (request, response) => {
    const path = decodeURIComponent((request.url ?? '/').split('?')[0]!);
    if (path === READS_PATH) {
      response.writeHead(200).end(String(reads));
      return;
    }
    reads++;
    const key = path.slice(`/${BUCKET}/`.length);
    const range = /^bytes=(\d+)-(\d+)$/.exec(String(request.headers.range ?? ''));
    const ifNoneMatch = request.headers['if-none-match'];
    try {
      const result = await store.get(key, {
        ...(range ? { range: [Number(range[1]), Number(range[2]) + 1] as const } : {}),
        ...(typeof ifNoneMatch === 'string' ? { ifNoneMatch } : {}),
      });
      if (result.ok) response.writeHead(range ? 206 : 200, { etag: result.etag }).end(result.body);
      else if (result.reason === 'not-modified') response.writeHead(304).end();
      else response.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
    } catch (error) {
      response.writeHead(500).end(`<Error><Code>InternalError</Code><Message>${error}</Message></Error>`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A loopback Secrets Manager answering GetSecretValue with a fixed cursor key. */
export async function startSecretsStandIn(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ ARN: SECRET_ARN, Name: 'cursor', SecretString: STAND_IN_CURSOR_SECRET }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Wall milliseconds from spawn to exit of `node args` (its output discarded). */
export function timedRun(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(node, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`exit ${code}: ${stderr.slice(-500)}`)),
    );
  });
}

/** Run `child.mjs` in a mode and parse its one result line. */
export function runChild<T>(
  node: string,
  flags: string[],
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...flags, join(BENCH_DIR, 'function-child.mjs'), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`function-child ${args[0]} exited ${code}: ${stderr.slice(-1500)}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as T);
    });
  });
}

/** The function URL event of a GET, as CloudFront's origin request reaches the function. */
export function functionUrlEvent(path: string, query: string, authorization: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers: {
      'x-catalogue-authorization': authorization,
      'accept-encoding': 'gzip, br',
      host: 'fn.lambda-url',
    },
    requestContext: { http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1' } },
    isBase64Encoded: false,
  };
}

/** The status in a streamed answer's prelude. */
function preludeStatus(invocation: Invocation): number {
  const end = invocation.body.indexOf(Buffer.alloc(8));
  try {
    return Number(JSON.parse(invocation.body.subarray(0, end < 0 ? undefined : end).toString()).statusCode);
  } catch {
    return 0;
  }
}

/** Spawn the runtime interface client on `taskRoot`, invoke once, and time spawn → end of the answer. */
export async function coldRun(
  node: string,
  ric: string,
  taskRoot: string,
  env: NodeJS.ProcessEnv,
  event: unknown,
): Promise<{ ms: number; status: number }> {
  const api = await startRuntimeApi();
  let child: ChildProcess | undefined;
  try {
    const started = performance.now();
    child = spawn(node, [...LAMBDA_512_FLAGS, ric, 'index.handler'], {
      env: {
        ...env,
        AWS_LAMBDA_RUNTIME_API: api.address,
        LAMBDA_TASK_ROOT: taskRoot,
        _HANDLER: 'index.handler',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const died = new Promise<never>((_, reject) =>
      child!.on('exit', (code) => reject(new Error(`runtime exited ${code}`))),
    );
    const invocation = await Promise.race([api.invoke(event), died]);
    return { ms: invocation.endedAt - started, status: preludeStatus(invocation) };
  } finally {
    await endRuntime(child, api);
  }
}

/** Kill a runtime process (when it still runs) and close its Runtime API emulator, failing what is pending. */
export async function endRuntime(child: ChildProcess | undefined, api: RuntimeApi): Promise<void> {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  api.reset('run over');
  await api.close();
}

/** Seeded random numbers (mulberry32), so a flood is the same from run to run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Distinct valid request lines over the whole language: module lists with every filter combination, both
 * sorts and none, sparse fields, includes and limits; module and manufacturer details with includes; the
 * other lists. Spread over `keys`.
 */
export function floodRequests(snapshot: Snapshot, count: number, keys: string[], seed: number) {
  const next = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const subset = <T>(values: readonly T[]) => values.filter(() => next() < 0.4);
  const modules = snapshot.modules;
  const relations = ['ins', 'outs', 'tags', 'panels'] as const;
  const fields = MODULE_FIELDS.filter((f) => f !== 'id');
  const seen = new Set<string>();
  const requests: { path: string; query: string; authorization: string }[] = [];
  while (requests.length < count) {
    const kind = next();
    const params: string[] = [];
    let path: string;
    if (kind < 0.7) {
      path = '/v1/modules';
      const module = pick(modules) as unknown as Record<string, unknown>;
      if (next() < 0.6) params.push(`manufacturer_id=${module.manufacturer_id}`);
      if (next() < 0.4) params.push(`hp=${module.hp}`);
      if (next() < 0.3) params.push(`standard=${module.standard}`);
      const tags = module.tag_ids as number[] | undefined;
      if (tags?.length && next() < 0.3) params.push(`tag=${pick(tags)}`);
      const sort = pick(['', 'name', 'id']);
      if (sort) params.push(`sort=${sort}`);
      const chosen = subset(fields);
      if (chosen.length > 0) params.push(`fields=${chosen.join(',')}`);
      const included = subset(relations);
      if (included.length > 0) params.push(`include=${included.join(',')}`);
      params.push(`limit=${1 + Math.floor(next() * 100)}`);
    } else if (kind < 0.9) {
      path = `/v1/modules/${pick(modules).id}`;
      const included = subset(relations);
      if (included.length > 0) params.push(`include=${included.join(',')}`);
    } else if (kind < 0.97) {
      path = `/v1/manufacturers/${pick(snapshot.manufacturers).id}`;
      if (next() < 0.5) params.push('include=modules');
    } else {
      path = pick(['/v1/manufacturers', '/v1/tags', '/v1/standards']);
      params.push(`limit=${1 + Math.floor(next() * 100)}`);
      if (next() < 0.5) params.push(`sort=${pick(['name', 'id'])}`);
    }
    const query = params.join('&');
    if (seen.has(`${path}?${query}`)) continue;
    seen.add(`${path}?${query}`);
    requests.push({ path, query, authorization: `Bearer ${pick(keys)}` });
  }
  return requests;
}

/**
 * A hostile flood: distinct first pages as small as the language allows (`limit` 1–3, one sparse field, any
 * sort), over the module list of every manufacturer, width, tag and standard, and of every manufacturer and width
 * together. Each is a composed answer of its own (keyed by its object, limit and fields) of well under a
 * kilobyte, so the byte cache fills with entries whose objects weigh more than their bytes. Spread over `keys`;
 * fails when the catalogue has fewer such pages than `count`.
 */
export function tinyPageRequests(snapshot: Snapshot, count: number, keys: string[], seed: number) {
  const next = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const fields = MODULE_FIELDS.filter((f) => f !== 'id');
  const filters = new Set<string>();
  for (const module of snapshot.modules) {
    const { manufacturer_id, hp, standard, tag_ids } = module as unknown as Record<string, unknown>;
    filters.add(`manufacturer_id=${manufacturer_id}`);
    filters.add(`hp=${hp}`);
    filters.add(`standard=${standard}`);
    filters.add(`manufacturer_id=${manufacturer_id}&hp=${hp}`);
    for (const tag of (tag_ids as number[] | undefined) ?? []) filters.add(`tag=${tag}`);
  }
  const queries = [...filters].flatMap((filter) =>
    [1, 2, 3].flatMap((limit) =>
      fields.flatMap((field) =>
        ['', '&sort=name', '&sort=id'].map((sort) => `${filter}&limit=${limit}&fields=${field}${sort}`),
      ),
    ),
  );
  if (queries.length < count)
    throw new Error(
      `the catalogue has ${queries.length} tiny first pages, fewer than the ${count} asked for`,
    );
  // A seeded shuffle's first `count`: every query distinct.
  for (let i = queries.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [queries[i], queries[j]] = [queries[j]!, queries[i]!];
  }
  return queries
    .slice(0, count)
    .map((query) => ({ path: '/v1/modules', query, authorization: `Bearer ${pick(keys)}` }));
}
