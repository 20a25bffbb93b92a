/**
 * The byte cache under a realistic spread (issue 40): what share of requests a warm container answers with no
 * object read, for each function memory size and byte-cache policy, when the requests of many keys follow a
 * Zipf-like popularity over the 25,000-module bench catalogue and are spread over several containers; and what
 * a million requests cost at each memory size, by the cost model's method (bench/calls.ts).
 *
 *   npx tsx bench/cache-spread.ts [requests per configuration]
 *
 * BENCH_SPREAD_CONTAINERS (default 4; a list: `1,4,16`), BENCH_SPREAD_ZIPF (the popularity exponent, 1.0),
 * BENCH_SPREAD_MEMORY (MB, `128,256,512,768,1024`), BENCH_SPREAD_POLICIES (`quarter`, `half`, `answers, quarter`,
 * `answers, half`: see POLICIES; `;` between them).
 *
 * The request population (every choice seeded, so every configuration replays the same requests):
 * 45 % module details (module by popularity rank, Zipf; no include 70 %, `ins,outs` 20 %, all four 10 %),
 * 10 % manufacturer details (Zipf; `include=modules` half of them), 35 % module lists (no filter 30 %, a
 * manufacturer 30 % (Zipf), a width 15 %, a tag 10 %, a standard 10 %, a manufacturer and a width 5 %; sort by
 * id 60 %, by name 40 %; limit 50 or 100 (30 %); a `fields`/`include` view 20 %; a first page 70 %, else a
 * later page 2–10 reached by its cursor), 5 % other lists, 5 % revalidations (If-None-Match of an answer
 * seen before); every request with `Accept-Encoding: gzip, br`, as CloudFront forwards it; 500 API keys.
 * A request goes to a container chosen at random (a warm Lambda container takes whatever comes next). Each
 * container is the proxy core (createHandler) over the published catalogue in a directory, with its own byte
 * cache of the size the memory gives (proxy/cache/bytes.ts), counting its object reads (the pointer's
 * re-check aside). Cursors are walked beforehand by a separate proxy that is not measured.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { ByteCache, defaultByteCacheBytes } from '../proxy/cache/bytes.js';
import { loadConfig } from '../proxy/config.js';
import { createHandler } from '../proxy/core/handler.js';
import type { ProxyHandler, ProxyRequest } from '../proxy/core/types.js';
import { MemoryKeyStore } from '../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../proxy/quota/memory.js';
import { POINTER_KEY } from '../store/layout.js';
import { DirectoryObjectStore } from '../store/objects/directory.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../store/objects/interface.js';
import { runCli } from './build.js';
import { ASSUMPTIONS, PRICES } from './calls.js';
import { loadAverage } from './machine.js';
import { CURSOR_SECRET, HUGE_LIMITS, WORK } from './settings.js';
import { fmt, table } from './stats.js';

const MB = 2 ** 20;
const MODULES = 25_000;
const KEYS = 500;
const list = (name: string, fallback: string) =>
  (process.env[name]?.trim() || fallback).split(',').map((v) => v.trim());
const requestsPer = Number(process.argv[2] ?? 100_000);
const containerCounts = list('BENCH_SPREAD_CONTAINERS', '4').map(Number);
const zipf = Number(process.env.BENCH_SPREAD_ZIPF ?? 1);
const memories = list('BENCH_SPREAD_MEMORY', '128,256,512,768,1024').map(Number);

/** What a container keeps, and how much of the function's memory it may use. */
const POLICIES = {
  /** Before issue 40: shards, ranges, composed and coded answers, in a quarter of the memory. */
  quarter: { size: quarterSize, keepListRanges: true },
  /** Since: the same, in half the memory (proxy/cache/bytes.ts, defaultByteCacheBytes). */
  half: { size: defaultSize, keepListRanges: true },
  /** Shards, details' objects, composed and coded answers, but not the ranges lists are composed from. */
  'answers, quarter': { size: quarterSize, keepListRanges: false },
  'answers, half': { size: defaultSize, keepListRanges: false },
} as const;
type Policy = keyof typeof POLICIES;
const policies = (process.env.BENCH_SPREAD_POLICIES?.trim() || Object.keys(POLICIES).join(';'))
  .split(';')
  .map((v) => v.trim()) as Policy[];
for (const policy of policies)
  if (!(policy in POLICIES)) throw new Error(`BENCH_SPREAD_POLICIES: no policy ${policy}`);

function defaultSize(memoryMb: number): number {
  return defaultByteCacheBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb) });
}
/** Before issue 40: a quarter of the memory, within what it leaves once the process's needs are set aside. */
function quarterSize(memoryMb: number): number {
  return Math.max(0, Math.min(Math.floor(memoryMb / 4), memoryMb - 192 - 32)) * MB;
}

/** Seeded random numbers (mulberry32). */
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

/** Draws items by Zipf popularity (rank r weighs 1/r^s) over a random order of `items`. */
function zipfOver<T>(items: readonly T[], next: () => number): () => T {
  const ranked = [...items];
  for (let i = ranked.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [ranked[i], ranked[j]] = [ranked[j]!, ranked[i]!];
  }
  const cumulative = new Float64Array(ranked.length);
  let sum = 0;
  ranked.forEach((_, r) => {
    sum += 1 / (r + 1) ** zipf;
    cumulative[r] = sum;
  });
  return () => {
    const x = next() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return ranked[lo]!;
  };
}

interface Line {
  path: string;
  query: string;
  /** A later page: the page to reach by walking from the first (2–10). */
  page?: number;
  revalidate?: boolean;
}

/** The request lines of the spread, in order (cursors not yet resolved). */
function spread(snapshot: Snapshot, count: number): Line[] {
  const next = random(40);
  const chance = (p: number) => next() < p;
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)]!;
  const module = zipfOver(snapshot.modules, next);
  const maker = zipfOver(snapshot.manufacturers, next);
  const hp = zipfOver([...new Set(snapshot.modules.map((m) => m.hp))], next);
  const tag = zipfOver(snapshot.tags, next);
  const standards = snapshot.standards.map((s) => s.id);
  const lines: Line[] = [];
  while (lines.length < count) {
    const kind = next();
    if (kind < 0.45) {
      const include = next();
      const query = include < 0.7 ? '' : include < 0.9 ? 'include=ins,outs' : 'include=ins,outs,tags,panels';
      lines.push({ path: `/v1/modules/${module().id}`, query });
    } else if (kind < 0.55) {
      lines.push({ path: `/v1/manufacturers/${maker().id}`, query: chance(0.5) ? 'include=modules' : '' });
    } else if (kind < 0.9) {
      lines.push(moduleList(next, { maker, hp, tag, standards, pick }));
    } else if (kind < 0.95) {
      lines.push({
        path: pick(['/v1/manufacturers', '/v1/tags', '/v1/standards']),
        query: chance(0.5) ? 'sort=name' : '',
      });
    } else if (lines.length > 0) {
      lines.push({ ...lines[Math.floor(next() * lines.length)]!, revalidate: true });
    }
  }
  return lines;
}

function moduleList(
  next: () => number,
  draw: {
    maker: () => { id: number };
    hp: () => number;
    tag: () => { id: number };
    standards: number[];
    pick: <T>(values: readonly T[]) => T;
  },
): Line {
  const params: string[] = [];
  const filter = next();
  if (filter < 0.3) {
    // No filter.
  } else if (filter < 0.6) params.push(`manufacturer_id=${draw.maker().id}`);
  else if (filter < 0.75) params.push(`hp=${draw.hp()}`);
  else if (filter < 0.85) params.push(`tag=${draw.tag().id}`);
  else if (filter < 0.95) params.push(`standard=${draw.pick(draw.standards)}`);
  else params.push(`manufacturer_id=${draw.maker().id}`, `hp=${draw.hp()}`);
  if (next() < 0.4) params.push('sort=name');
  if (next() < 0.3) params.push('limit=100');
  if (next() < 0.2) params.push(draw.pick(['fields=name,hp', 'include=tags', 'fields=name&include=tags']));
  const page = next() < 0.7 ? undefined : 2 + Math.floor(next() * 9);
  return { path: '/v1/modules', query: params.join('&'), ...(page ? { page } : {}) };
}

/** The proxy core as a container runs it, over `objects`, with `cache`. */
function container(objects: ObjectStore, keys: MemoryKeyStore, cache: ByteCache): ProxyHandler {
  const config = loadConfig({
    CATALOGUE_BUCKET: 'bench',
    KEYS_TABLE: 'bench-keys',
    COUNTERS_TABLE: 'bench-counters',
    CURSOR_SECRET,
    BYTE_CACHE_MB: String(cache.maxBytes / MB),
    // What is measured is what is read, not how fast: a loaded machine's slow read must not become a 503.
    DEPENDENCY_TIMEOUT_MS: '60000',
  });
  let n = 0;
  return createHandler({
    objects,
    keys,
    quota: new MemoryQuotaMeter(),
    config,
    now: () => new Date(),
    requestId: () => `req_spread${++n}`,
    log: () => {},
    byteCache: cache,
  });
}

/** A byte cache that does not keep the ranges lists are composed from (`r:<object>:<start>-<end>`). */
class AnswersOnlyCache extends ByteCache {
  override set(key: string, value: unknown, weight: number): void {
    if (/^r:[^:]+:\d+-\d+$/.test(key)) return;
    super.set(key, value, weight);
  }
}

/** Counts the data reads (not the pointer's re-check) of one container. */
class CountingStore implements ObjectStore {
  reads = 0;
  constructor(readonly inner: ObjectStore) {}
  get(key: string, options?: GetOptions): Promise<GetOutcome> {
    if (!key.endsWith(POINTER_KEY)) this.reads++;
    return this.inner.get(key, options);
  }
}

const request = (line: Line, authorization: string, etag?: string): ProxyRequest => ({
  method: 'GET',
  path: line.path,
  query: line.query,
  headers: {
    authorization,
    'accept-encoding': 'gzip, br',
    ...(etag ? { 'if-none-match': etag } : {}),
  },
});

/** Resolve later pages to their cursors (walking with an unmeasured proxy), and revalidations to ETags. */
async function resolve(lines: Line[], objects: ObjectStore, keys: MemoryKeyStore, authorization: string) {
  const oracle = container(objects, keys, new ByteCache({ maxBytes: 2_048 * MB }));
  const walks = new Map<string, string[]>();
  const body = (answer: { body?: Buffer; headers: Record<string, string> }) =>
    answer.headers['content-encoding'] === 'br' ? brotliDecompressSync(answer.body!) : answer.body!;
  const resolved: { line: Line; etag?: string }[] = [];
  for (const line of lines) {
    let target: Line = { path: line.path, query: line.query };
    if (line.page) {
      const cursors = walks.get(line.query) ?? [];
      walks.set(line.query, cursors);
      while (cursors.length < line.page - 1) {
        const query = cursors.length === 0 ? line.query : `${line.query}&cursor=${cursors.at(-1)}`;
        const answer = await oracle(request({ path: line.path, query }, authorization));
        const cursor = JSON.parse(body(answer).toString()).page.next_cursor as string | null;
        if (!cursor) break;
        cursors.push(cursor);
      }
      const cursor = cursors[Math.min(line.page - 1, cursors.length) - 1];
      if (cursor)
        target = { path: line.path, query: `${line.query}${line.query ? '&' : ''}cursor=${cursor}` };
    }
    const etag = line.revalidate ? (await oracle(request(target, authorization))).headers.etag : undefined;
    resolved.push(etag ? { line: target, etag } : { line: target });
  }
  return resolved;
}

interface Figures {
  hitRatio: number;
  /** Object reads per request. */
  reads: number;
  /** Billed Lambda ms per request, by the cost model (CPU scaled to the memory's share of a vCPU, waits). */
  billedMs: number;
  cpuHitUs: number;
  cpuMissUs: number;
  cacheMb: number;
  /** Bytes the caches held at the end, per container. */
  heldMb: number;
}

/** One configuration: the requests spread over `containers`, each with a cache of the policy's size. */
async function simulate(
  resolved: { line: Line; etag?: string }[],
  setup: { policy: Policy; memoryMb: number; containers: number; objects: ObjectStore; keys: MemoryKeyStore },
  authorizations: string[],
): Promise<Figures> {
  const { policy, memoryMb, containers, objects, keys } = setup;
  const { size, keepListRanges } = POLICIES[policy];
  const maxBytes = size(memoryMb);
  const stores = Array.from({ length: containers }, () => new CountingStore(objects));
  const caches = stores.map(() =>
    keepListRanges ? new ByteCache({ maxBytes }) : new AnswersOnlyCache({ maxBytes }),
  );
  const handlers = stores.map((store, c) => container(store, keys, caches[c]!));
  const route = random(7);
  const steady = { requests: 0, hits: 0, reads: 0, billed: 0, cpuHit: 0, hitN: 0, cpuMiss: 0, missN: 0 };
  const cpuScale = Math.max(1, 1769 / memoryMb);
  for (const [i, { line, etag }] of resolved.entries()) {
    const c = Math.floor(route() * containers);
    const store = stores[c]!;
    const before = store.reads;
    const cpu = process.cpuUsage();
    const answer = await handlers[c]!(request(line, authorizations[i % authorizations.length]!, etag));
    const used = process.cpuUsage(cpu);
    if (answer.status >= 500) throw new Error(`${line.path}?${line.query}: ${answer.status} ${answer.body}`);
    // The first three quarters warm the containers; the last is measured.
    if (i < (resolved.length * 3) / 4) continue;
    const reads = store.reads - before;
    const cpuUs = used.user + used.system;
    const waitMs =
      reads > 0
        ? Math.max(reads * ASSUMPTIONS.s3GetMs, ASSUMPTIONS.dynamoWriteMs)
        : ASSUMPTIONS.dynamoWriteMs;
    steady.requests++;
    steady.reads += reads;
    steady.billed += Math.ceil((cpuUs / 1000) * cpuScale + waitMs);
    if (reads === 0) {
      steady.hits++;
      steady.cpuHit += cpuUs;
      steady.hitN++;
    } else {
      steady.cpuMiss += cpuUs;
      steady.missN++;
    }
  }
  return {
    hitRatio: steady.hits / steady.requests,
    reads: steady.reads / steady.requests,
    billedMs: steady.billed / steady.requests,
    cpuHitUs: steady.cpuHit / Math.max(1, steady.hitN),
    cpuMissUs: steady.cpuMiss / Math.max(1, steady.missN),
    cacheMb: maxBytes / MB,
    heldMb: caches.reduce((sum, cache) => sum + cache.stats().bytes, 0) / containers / MB,
  };
}

/** What a million requests cost at `memoryMb` beyond what every size pays alike, by the cost model. */
function perMillion(figures: Figures, memoryMb: number) {
  const lambda =
    PRICES.lambdaPerMillion + 1e6 * (memoryMb / 1024) * (figures.billedMs / 1000) * PRICES.lambdaArmGbSecond;
  const s3 = figures.reads * PRICES.s3GetPerThousand * 1000;
  return { lambda, s3, total: lambda + s3 };
}

async function main(): Promise<void> {
  const snapshotDir = join(WORK, `snapshot-${MODULES}-1`);
  // A directory of its own: section 2 publishes into its own while this runs.
  const storeDir = join(WORK, 'spread-store');
  const snapshot = generateSnapshot({ modules: MODULES, seed: 1 });
  await readFile(join(snapshotDir, 'modules.json')).catch(() => writeSnapshot(snapshotDir, snapshot));
  // An incremental publish: a no-op when the directory already holds this catalogue.
  await runCli(['build', '--source', snapshotDir, '--out', storeDir]);
  const objects = new DirectoryObjectStore(storeDir);
  const keys = new MemoryKeyStore();
  const authorizations = Array.from({ length: KEYS }, (_, i) => {
    const key = `pk_live_${String(i).padStart(22, 'K')}`;
    keys.add(key, { tier: 'partner', limits: HUGE_LIMITS });
    return `Bearer ${key}`;
  });
  const load = loadAverage();
  const resolved = await resolve(spread(snapshot, requestsPer), objects, keys, authorizations[0]!);
  const rows: string[][] = [];
  for (const containers of containerCounts) {
    for (const policy of policies) {
      for (const memoryMb of memories) {
        const figures = await simulate(
          resolved,
          { policy, memoryMb, containers, objects, keys },
          authorizations,
        );
        const cost = perMillion(figures, memoryMb);
        rows.push([
          String(containers),
          policy,
          `${memoryMb} MB`,
          fmt.int(figures.cacheMb),
          fmt.pct(figures.hitRatio),
          figures.reads.toFixed(3),
          fmt.int(figures.cpuHitUs),
          fmt.int(figures.cpuMissUs),
          figures.billedMs.toFixed(2),
          fmt.usd(cost.lambda),
          fmt.usd(cost.s3),
          `**${fmt.usd(cost.total)}**`,
          fmt.int(figures.heldMb),
        ]);
        console.error(rows.at(-1)!.join(' | '));
      }
    }
  }
  console.log(
    [
      `${fmt.int(requestsPer)} requests per configuration (the last quarter measured), Zipf exponent ${zipf}, ${KEYS} keys; load average at the start ${load}, at the end ${loadAverage()}.`,
      '',
      table(
        [
          'containers',
          'policy',
          'memory',
          'byte cache MB',
          'no object read',
          'reads per request',
          'CPU µs, hit',
          'CPU µs, miss',
          'billed ms',
          'Lambda per 1M',
          'S3 per 1M',
          'Lambda + S3 per 1M',
          'held per container, MB',
        ],
        rows,
      ),
    ].join('\n'),
  );
}

await main();
