/**
 * Warm misses of two proxy assets side by side (issue 40): each asset's handler in its own process with
 * Lambda's heap flags at 512 MB (function-child.mjs, `misses`), alternating base, new, base, new…, against the
 * same stand-ins — a generated catalogue on the S3 stand-in, keys and counters in dynalite, the cursor secret in
 * the Secrets Manager stand-in — with S3 and DynamoDB behind delaying TCP proxies that add in-region service
 * latencies (section 9's: S3 15 ms, DynamoDB 4 ms per round trip; BENCH_S3_LATENCY_MS, BENCH_DYNAMODB_LATENCY_MS).
 *
 *   npx tsx bench/miss-ab.ts <base>/index.mjs <new>/index.mjs [rounds]
 *
 * A fresh container is warmed (the pointer, every index shard, connections, the JIT) and then sends each
 * request of the plan once: module details and cursor pages it has not read (a warm miss: exactly one object
 * read, checked against the S3 stand-in's count), and a hot detail (a hit: no read). Per kind: wall time p50
 * and p99 over every round, CPU per request, and billed milliseconds by the cost model's method (bench/
 * calls.ts: CPU × the slowdown of a 512 MB function, plus the wait on dependencies — here measured through the
 * delaying proxies as wall time less CPU; run with BENCH_S3_LATENCY_MS=25 BENCH_DYNAMODB_LATENCY_MS=6 for the
 * model's in-region p50s).
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { createProxy } from '../proxy/app.js';
import { loadConfig } from '../proxy/config.js';
import type { ProxyHandler } from '../proxy/core/types.js';
import { MemoryKeyStore } from '../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../proxy/quota/memory.js';
import { DirectoryObjectStore } from '../store/objects/directory.js';
import { parsePointer, shardOf } from '../store/pointer.js';
import { detailKey } from '../store/schema.js';
import { LAMBDA_NODE, nodeBinary } from '../test/helpers/node-release.js';
import { startSlowProxy } from '../test/helpers/slow-proxy.js';
import { runCli } from './build.js';
import { ASSUMPTIONS } from './calls.js';
import { forkServer, stopAll } from './children.js';
import {
  BUCKET,
  benchFunctionEnv,
  LAMBDA_512_FLAGS,
  READS_PATH,
  runChild,
  STAND_IN_CURSOR_SECRET,
  seedBenchKey,
  startS3StandIn,
  startSecretsStandIn,
  TABLES,
} from './function-harness.js';
import { loadAverage } from './machine.js';
import { BENCH_DIR, BENCH_KEY, HUGE_LIMITS, WORK } from './settings.js';
import { fmt, median, percentile } from './stats.js';

interface Request {
  path: string;
  query: string;
  authorization: string;
}
type Kind = 'detail miss' | 'cursor page miss' | 'hit';
interface ChildResult {
  results: { kind: Kind; ms: number; cpuUs: number; status: number }[];
  reads: number;
  statuses: Record<string, number>;
}

const [base, next, roundsArg] = process.argv.slice(2);
if (!base || !next)
  throw new Error('usage: npx tsx bench/miss-ab.ts <base index.mjs> <new index.mjs> [rounds]');
const rounds = Number(roundsArg ?? 6);
const envNumber = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const s3Ms = envNumber('BENCH_S3_LATENCY_MS', 15);
const dynamoMs = envNumber('BENCH_DYNAMODB_LATENCY_MS', 4);
const modules = envNumber('BENCH_AB_MODULES', 2_000);
const authorization = `Bearer ${BENCH_KEY}`;
const work = join(WORK, 'miss-ab');

/** The catalogue's cursor pages (limit 100: each page reads a range of its own), walked in-process. */
async function cursorPages(published: string, list: string): Promise<Request[]> {
  const keys = new MemoryKeyStore();
  keys.add(BENCH_KEY, { limits: HUGE_LIMITS });
  const config = loadConfig({
    CATALOGUE_BUCKET: BUCKET,
    KEYS_TABLE: TABLES.keysTable,
    COUNTERS_TABLE: TABLES.countersTable,
    CURSOR_SECRET: STAND_IN_CURSOR_SECRET,
  });
  const handle: ProxyHandler = createProxy(config, {
    objects: new DirectoryObjectStore(published),
    keys,
    quota: new MemoryQuotaMeter(),
    log: () => {},
  });
  const pages: Request[] = [];
  let query = list;
  for (;;) {
    const answer = await handle({ method: 'GET', path: '/v1/modules', query, headers: { authorization } });
    const cursor = JSON.parse(answer.body!.toString()).page.next_cursor as string | null;
    if (!cursor) return pages;
    query = `${list}&cursor=${cursor}`;
    pages.push({ path: '/v1/modules', query, authorization });
  }
}

/**
 * What a container sends: one module detail per index shard (to warm them all), then misses — other modules'
 * details (their shard held, their object not) and cursor pages — with a hit after every other miss.
 */
async function missPlan(published: string, moduleIds: number[]) {
  const pointer = parsePointer(await readFile(join(published, 'current.json')))!;
  const warmed = new Set<number>();
  const warm: Request[] = [];
  const misses: (Request & { kind: Kind })[] = [];
  for (const id of moduleIds) {
    const shard = shardOf(detailKey('modules', id), pointer.shards.length);
    const request = { path: `/v1/modules/${id}`, query: '', authorization };
    if (!warmed.has(shard)) {
      warmed.add(shard);
      warm.push(request);
    } else if (misses.length < 60) misses.push({ ...request, kind: 'detail miss' });
  }
  const pages = [
    ...(await cursorPages(published, 'limit=100')),
    ...(await cursorPages(published, 'limit=100&sort=name')),
  ];
  const measured: (Request & { kind: Kind })[] = [];
  const hot = warm[0]!;
  const interleaved = misses.flatMap((m, i) =>
    pages[i] ? [m, { ...pages[i], kind: 'cursor page miss' as const }] : [m],
  );
  interleaved.forEach((miss, i) => {
    measured.push(miss);
    if (i % 2 === 1) measured.push({ ...hot, kind: 'hit' });
  });
  return { warm, hot, measured, misses: interleaved.length };
}

await rm(work, { recursive: true, force: true });
await mkdir(work, { recursive: true });
const snapshot = generateSnapshot({ modules, seed: 1 });
await writeSnapshot(join(work, 'snapshot'), snapshot);
const published = join(work, 'catalogue');
await runCli(['build', '--source', join(work, 'snapshot'), '--out', published]);
const plan = await missPlan(
  published,
  snapshot.modules.map((m) => m.id),
);
const planFile = join(work, 'plan.json');
await writeFile(planFile, JSON.stringify(plan));

const s3 = await startS3StandIn(published);
const secrets = await startSecretsStandIn();
const dynamo = await forkServer('dynalite', join(BENCH_DIR, 'servers/dynalite.ts'));
const port = (endpoint: string) => Number(new URL(endpoint).port);
// Half the round trip each way (test/helpers/slow-proxy.ts holds every chunk).
const slowS3 = await startSlowProxy({ targetPort: port(s3.endpoint), delayMs: s3Ms / 2 });
const slowDynamo = await startSlowProxy({
  targetPort: port(String(dynamo.ready.endpoint)),
  delayMs: dynamoMs / 2,
});
try {
  await seedBenchKey(String(dynamo.ready.endpoint));
  const env: NodeJS.ProcessEnv = {
    ...benchFunctionEnv({ s3: slowS3.endpoint, dynamodb: slowDynamo.endpoint, secrets: secrets.endpoint }),
    // No pointer re-check while measuring: a miss is then exactly one object read.
    POINTER_TTL_MS: '3600000',
    BENCH_READS_URL: `${s3.endpoint}${READS_PATH}`,
    PROXY_LOG: join(work, 'proxy.log'),
  };
  const loadAtStart = loadAverage();
  const node = nodeBinary(LAMBDA_NODE.version);
  const seen: Record<'base' | 'new', ChildResult['results']> = { base: [], new: [] };
  for (let round = 0; round < rounds; round++) {
    const order = [
      ['base', base],
      ['new', next],
    ] as const;
    for (const [name, asset] of round % 2 === 0 ? order : [...order].reverse()) {
      const result = await runChild<ChildResult>(
        node,
        LAMBDA_512_FLAGS,
        ['misses', pathToFileURL(asset).href, planFile],
        env,
      );
      if (Object.keys(result.statuses).some((status) => status !== '200'))
        throw new Error(`${name}: answered ${JSON.stringify(result.statuses)}`);
      if (result.reads !== plan.misses)
        throw new Error(`${name}: ${result.reads} object reads for ${plan.misses} misses`);
      seen[name].push(...result.results);
    }
  }
  const figures = (name: 'base' | 'new', kind: Kind) => {
    const rows = seen[name].filter((r) => r.kind === kind);
    const ms = Float64Array.from(rows.map((r) => r.ms)).sort();
    const cpuMs = median(rows.map((r) => r.cpuUs / 1000));
    const waitMs = median(rows.map((r) => r.ms - r.cpuUs / 1000));
    return {
      n: rows.length,
      p50: Number(fmt.ms(percentile(ms, 50))),
      p99: Number(fmt.ms(percentile(ms, 99))),
      cpuMs: Number(cpuMs.toFixed(3)),
      waitMs: Number(waitMs.toFixed(2)),
      billedMs: Math.max(1, Math.ceil(cpuMs * ASSUMPTIONS.cpuSlowdown + waitMs)),
    };
  };
  const kinds: Kind[] = ['detail miss', 'cursor page miss', 'hit'];
  const report = Object.fromEntries(
    kinds.map((kind) => {
      const [a, b] = [figures('base', kind), figures('new', kind)];
      return [kind, { base: a, new: b, p50Ratio: Number((b.p50 / a.p50).toFixed(3)) }];
    }),
  );
  console.log(
    JSON.stringify(
      {
        injected: { s3Ms, dynamoMs },
        modules,
        rounds,
        missesPerContainer: plan.misses,
        load: { atStart: loadAtStart, atEnd: loadAverage() },
        ...report,
      },
      null,
      1,
    ),
  );
} finally {
  await slowS3.close();
  await slowDynamo.close();
  await s3.close();
  await secrets.close();
  await stopAll([dynamo]);
}
