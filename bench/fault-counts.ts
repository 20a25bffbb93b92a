/**
 * Measurement script of issue 22 (not part of npm test): the proxy as deployed (createProxy, lean hot-path
 * clients) over s3rver and dynalite behind fault-injecting HTTP proxies, and the counts that matter for each
 * fault — run against the code before and after a change to compare. `npx tsx bench/fault-counts.ts`
 */

import { startDynamo, startS3 } from '@catalogue/local-aws';
import { createTables } from '../admin/tables.js';
import { dynamoClient, leanDynamo, s3Client } from '../aws/sdk.js';
import { publishCatalogue } from '../builder/publish/publish.js';
import { generateSnapshot } from '../builder/synthetic/generate.js';
import { createProxy } from '../proxy/app.js';
import { loadConfig } from '../proxy/config.js';
import type { ProxyHandler } from '../proxy/core/types.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { registerKey } from '../test/helpers/admin.js';
import { type FaultAction, s3Error, startFaultProxy } from '../test/helpers/fault-proxy.js';

const BUCKET = 'faults-22';
const PREFIX = 'cat/';
const TABLES = { keysTable: 'k22', countersTable: 'c22' };
const KEY = `pk_live_${'Q'.repeat(22)}`;

const [s3, dynamo] = await Promise.all([startS3(BUCKET), startDynamo()]);
const [s3Faults, dynamoFaults] = await Promise.all([
  startFaultProxy({ targetPort: s3.port }),
  startFaultProxy({ targetPort: dynamo.port }),
]);
const ddb = dynamoClient({ endpoint: dynamo.endpoint });
await createTables(ddb, TABLES);
const lean = leanDynamo(dynamo.endpoint);
await registerKey({ dynamo: lean, ...TABLES }, KEY, { tier: 'partner', limits: { minute: 1e6, month: 1e9 } });
const writer = s3Client({ endpoint: s3.endpoint });
await publishCatalogue({
  store: new S3ObjectStore({ client: writer, bucket: BUCKET }),
  prefix: PREFIX,
  snapshot: generateSnapshot({ modules: 400, seed: 22 }),
});

function proxy(env: Record<string, string> = {}): ProxyHandler {
  const config = loadConfig({
    CATALOGUE_BUCKET: BUCKET,
    CATALOGUE_PREFIX: PREFIX,
    S3_ENDPOINT: s3Faults.endpoint,
    DYNAMODB_ENDPOINT: dynamoFaults.endpoint,
    ...TABLES,
    KEYS_TABLE: TABLES.keysTable,
    COUNTERS_TABLE: TABLES.countersTable,
    CURSOR_SECRET: 'faults-22-cursor-secret-0123456789abcdef',
    KEY_CACHE_TTL_MS: '600000',
    POINTER_TTL_MS: '0',
    DEPENDENCY_TIMEOUT_MS: '2000',
    BYTE_CACHE_MB: '32',
    ...env,
  });
  if (!config.ok) throw new Error(config.problems.join('; '));
  return createProxy(config, {
    log: (line) => {
      if (process.env.DEBUG && (!('status' in line) || line.status >= 500))
        console.error(JSON.stringify(line));
    },
  });
}

/** An answer as compared: status and body, without the request id (it differs per request). */
const shown = (answer: { status: number; body?: Buffer | undefined }) =>
  `${answer.status} ${(answer.body?.toString() ?? '').replace(/"request_id":"req_[^"]*"/, '')}`;

const get = (handle: ProxyHandler, target: string) => {
  const [path, query = ''] = target.split('?') as [string, string?];
  return handle({ method: 'GET', path, query, headers: { authorization: `Bearer ${KEY}` } });
};

async function counted(): Promise<number> {
  const { ScanCommand } = await import('@aws-sdk/client-dynamodb');
  const items = (await ddb.send(new ScanCommand({ TableName: TABLES.countersTable }))).Items ?? [];
  return items.reduce((sum, item) => sum + Number(item.month_count?.N ?? 0), 0);
}

const TARGETS = [
  '/v1/tags',
  '/v1/standards',
  '/v1/manufacturers',
  '/v1/modules?limit=100',
  '/v1/modules?sort=name&limit=7',
  '/v1/modules?hp=8',
  '/v1/modules?include=ins,outs',
  ...Array.from({ length: 12 }, (_, i) => `/v1/modules/${i + 1}`),
  '/v1/manufacturers/1',
  '/v1/manufacturers/2?include=modules',
];
const report: Record<string, unknown> = {};

// 1. Flipped bytes on every object read (length kept): wrong 200s, and what stays wrong once S3 is healthy.
{
  const healthy = new Map<string, string>();
  const reference = proxy();
  for (const target of TARGETS) {
    const answer = await get(reference, target);
    healthy.set(target, shown(answer));
  }
  const handle = proxy();
  s3Faults.setRule(({ method, url }) => (method === 'GET' && url.includes('/o/') ? 'flip' : undefined));
  const statuses: Record<number, number> = {};
  let wrong200 = 0;
  let wrongOther = 0;
  let invalidJson = 0;
  for (let round = 0; round < 6; round++) {
    for (const target of TARGETS) {
      const answer = await get(handle, target);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      const same = shown(answer) === healthy.get(target);
      if (!same && answer.status !== 200 && answer.status !== 503) wrongOther++;
      if (answer.status === 200 && !same) {
        wrong200++;
        try {
          JSON.parse(answer.body?.toString() ?? '');
        } catch {
          invalidJson++;
        }
      }
    }
  }
  s3Faults.setRule(undefined);
  let stillWrong = 0;
  for (const target of TARGETS) {
    const answer = await get(handle, target);
    if (shown(answer) !== healthy.get(target)) {
      stillWrong++;
      if (process.env.DEBUG)
        console.error(
          target,
          answer.status,
          answer.body?.toString().slice(0, 200),
          healthy.get(target)?.slice(0, 200),
        );
    }
  }
  report.flip = {
    requests: 6 * TARGETS.length,
    statuses,
    wrong200,
    wrongOther,
    invalidJson,
    urls: TARGETS.length,
    stillWrong,
  };
}

// 2. A cursor page's read answered with garbage, or truncated: what the consumer is told, and is it counted.
for (const action of ['garbage', 'truncate', 'flip'] as const) {
  const handle = proxy();
  const first = await get(handle, '/v1/modules?limit=100');
  const cursor = JSON.parse(first.body!.toString()).page.next_cursor as string;
  const before = await counted();
  s3Faults.setRule(({ method, headers }) => (method === 'GET' && headers.range ? action : undefined));
  const statuses: Record<number, number> = {};
  for (let i = 0; i < 5; i++) {
    const answer = await get(proxy(), `/v1/modules?limit=100&cursor=${cursor}`);
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  }
  s3Faults.setRule(undefined);
  report[`cursor-${action}`] = { requests: 5, statuses, counted: (await counted()) - before };
}

// 3. The metering write lands, then the connection is reset before its answer (every 3rd UpdateItem).
{
  const handle = proxy();
  await get(handle, '/v1/tags'); // warm the key cache
  let updates = 0;
  dynamoFaults.setRule(({ headers }) =>
    String(headers['x-amz-target']).endsWith('UpdateItem') && ++updates % 3 === 0 ? 'reset-after' : undefined,
  );
  const before = await counted();
  const statuses: Record<number, number> = {};
  const answers = await Promise.all(Array.from({ length: 81 }, () => get(handle, '/v1/tags')));
  for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  dynamoFaults.setRule(undefined);
  report.meterReset = {
    requests: 81,
    statuses,
    counted: (await counted()) - before,
    resets: Math.floor(updates / 3),
  };
}

// 4. SlowDown on the pointer re-check while everything else is healthy.
{
  const handle = proxy({ POINTER_TTL_MS: '100' });
  await get(handle, '/v1/modules/1');
  const slowDown: FaultAction = s3Error(503, 'SlowDown', 'Please reduce your request rate.');
  s3Faults.setRule(({ url }) => (url.includes('current.json') ? slowDown : undefined));
  await new Promise((resolve) => setTimeout(resolve, 150));
  const statuses: Record<number, number> = {};
  for (let i = 0; i < 10; i++) {
    const started = Date.now();
    const answer = await get(handle, '/v1/modules/1');
    if (process.env.DEBUG) console.error('slowdown', i, answer.status, Date.now() - started);
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  }
  s3Faults.setRule(undefined);
  report.pointerSlowDown = { requests: 10, statuses };
}

console.log(JSON.stringify(report, null, 1));
writer.destroy();
ddb.destroy();
await lean.close();
await s3Faults.close();
await dynamoFaults.close();
await s3.dispose();
await dynamo.dispose();
process.exit(0);
