/**
 * The bench's in-memory proxies: a whole published catalogue in a MemoryObjectStore (objects, index shards,
 * pointer), and the real `createProxy` over it with the bench's partner key and a meter with huge limits.
 */
import { renderInFull } from '../../builder/render/full.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { cachedKeys, createProxy, type ProxyOverrides } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import type { ProxyHandler } from '../../proxy/core/types.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import type { ObjectStore } from '../../store/objects/interface.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { BENCH_KEY, CURSOR_SECRET, HUGE_LIMITS } from '../settings.js';

/**
 * The proxy as proxy/app.ts wires it, over `objects`, with in-memory keys (BENCH_KEY, partner) behind the
 * container's key cache, and in-memory quota; `env` adds configuration (BYTE_CACHE_MB…), `overrides` replaces dependencies (a silent log…).
 * @example memoryProxy(objects, { BYTE_CACHE_MB: '0' }, { log: () => {} })
 */
export function memoryProxy(
  objects: ObjectStore,
  env: Record<string, string> = {},
  overrides: ProxyOverrides = {},
): ProxyHandler {
  const keys = new MemoryKeyStore();
  keys.add(BENCH_KEY, { tier: 'partner', limits: HUGE_LIMITS, label: 'bench' });
  const config = loadConfig({
    CATALOGUE_BUCKET: 'bench',
    KEYS_TABLE: 'bench-keys',
    COUNTERS_TABLE: 'bench-counters',
    CURSOR_SECRET,
    ...env,
  });
  if (!config.ok) throw new Error(`bench configuration: ${config.problems.join('; ')}`);
  // Key lookups go through the container's key cache, as deployed (over DynamoDB there).
  const cached = cachedKeys(keys, config.config);
  return createProxy(config, { objects, keys: cached, quota: new MemoryQuotaMeter(), ...overrides });
}

export async function catalogueInMemory(
  snapshot: Snapshot,
): Promise<{ objects: MemoryObjectStore; bytes: number }> {
  const render = renderInFull(snapshot);
  const objects = new MemoryObjectStore();
  let bytes = 0;
  for (const object of render.objects()) {
    await objects.put(objectKeyFor('', object.objectId), object.bytes);
    bytes += object.bytes.byteLength;
  }
  const { pointerBytes, shards } = render.result();
  for (const [shardId, shard] of shards) await objects.put(objectKeyFor('', shardId), shard);
  await objects.put(POINTER_KEY, pointerBytes);
  return { objects, bytes };
}
