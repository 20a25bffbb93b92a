/**
 * One cold start of the proxy, as a fresh container does it: the real `createProxy` wiring over a directory
 * store (in-memory keys and quota, so only the catalogue's cost is measured), then its first answers.
 * Prints one JSON line. Run with --expose-gc so heap figures are after collection:
 *   node --expose-gc --import tsx bench/servers/coldstart.ts <published directory>
 */
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyHandler } from '../../proxy/core/types.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { DirectoryObjectStore } from '../../store/objects/directory.js';
import { BENCH_KEY, CURSOR_SECRET, HUGE_LIMITS } from '../settings.js';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const root = process.argv[2]!;
const keys = new MemoryKeyStore();
keys.add(BENCH_KEY, { tier: 'partner', limits: HUGE_LIMITS, label: 'bench' });
const config = loadConfig({ CATALOGUE_BUCKET: 'bench', KEYS_TABLE: 'k', COUNTERS_TABLE: 'c', CURSOR_SECRET });
const heapBefore = heap();
const started = performance.now();
const handle: ProxyHandler = createProxy(config, {
  objects: new DirectoryObjectStore(root),
  keys,
  quota: new MemoryQuotaMeter(),
  log: () => {},
});
const get = async (target: string) => {
  const [path, query = ''] = target.split('?');
  const response = await handle({
    method: 'GET',
    path: path!,
    query,
    headers: { authorization: `Bearer ${BENCH_KEY}` },
  });
  if (response.status !== 200) throw new Error(`${target}: ${response.status} ${response.body}`);
  return response;
};
await get('/v1/modules?limit=50');
const firstMs = performance.now() - started;
const sinceProcessStartMs = performance.now();
const heapAfterFirst = heap();
const detailStarted = performance.now();
await get('/v1/manufacturers?sort=name');
const secondMs = performance.now() - detailStarted;
process.stdout.write(
  `${JSON.stringify({
    firstMs,
    sinceProcessStartMs,
    secondMs,
    heapGrowthBytes: heapAfterFirst - heapBefore,
    rssBytes: process.memoryUsage().rss,
  })}\n`,
);
