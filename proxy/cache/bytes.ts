/**
 * The byte cache: a bounded in-memory LRU of values derived from IMMUTABLE objects (index shards, data
 * ranges, composed and coded answers). Because what it caches never changes under its key, it needs no TTL
 * and no invalidation: a publish only adds new keys, and old ones age out by recency. Bounded by bytes
 * (each entry says what its value weighs; the cache adds what the entry itself holds), not by entries, so a
 * container's memory stays predictable.
 *
 * Every key is made by {@link cacheKey}: one namespace per kind of value, so unrelated values cannot collide.
 */
import { LRUCache } from 'lru-cache';
import { integerSetting } from '../../aws/env.js';

/**
 * The byte cache's keys, one namespace (the first character) per kind of value. Each names exactly what
 * selects the value's bytes, so an entry never goes stale.
 */
export const cacheKey = {
  /** A parsed index shard. */
  shard: (shardId: string) => `s:${shardId}`,
  /** An object's bytes, or a range of them. */
  range: (objectId: string, range?: readonly [number, number]) =>
    range ? `r:${objectId}:${range[0]}-${range[1]}` : `r:${objectId}`,
  /** A composed detail answer: the object and the fragments kept. */
  detail: (objectId: string, mask: number) => `d:${objectId}:${mask}`,
  /** A composed first page: the object, the selection, and the variant its cursor binds. */
  firstPage: (objectId: string, limit: number, mask: number, variant: string) =>
    `p:${objectId}:${limit}:${mask}:${variant}`,
  /** A composed cursor page, by its ETag (which names what selects its bytes). */
  cursorPage: (etag: string) => `c:${etag}`,
  /** An answer in a content coding, by its identity ETag. */
  coded: (etag: string, coding: string) => `z:${etag}:${coding}`,
} as const;

export interface ByteCacheOptions {
  /** Upper bound of the summed weights of the entries; 0 disables caching. */
  maxBytes: number;
}

export interface ByteCacheStats {
  /** The summed sizes of the entries: their values' weights, keys and {@link ENTRY_OVERHEAD_BYTES} each. */
  bytes: number;
  entries: number;
  hits: number;
  misses: number;
}

interface Entry {
  value: unknown;
  weight: number;
}

/** An entry larger than this share of the cache is not kept: one huge value must not flush the hot set. */
const LARGEST_SHARE = 0.25;

/**
 * What an entry holds besides the bytes its caller weighs and its key: the LRU's node, the entry, the value's
 * objects (a Buffer's object and its backing store, a composed answer's object and ETag), the allocator's share
 * and the heap's slack. Measured on Node.js 24 with 200,000 entries of 16–200 B (composed answers, ranges, coded
 * answers): 530–750 B more on the V8 heap than their bytes, and 1.5–1.8 KB more RSS. Counted in every entry's
 * size, so that the bound holds for tiny answers too: a flood of 240,000 distinct first pages of 1–3 modules and
 * one field took a 512 MB function's process to 600 MB and rising when entries weighed their bytes alone, to
 * 533 MB with 1 KiB counted, and to 477 MB, level, with 2 KiB (bench section 10, bench/README.md).
 */
export const ENTRY_OVERHEAD_BYTES = 2048;

/**
 * `bytes`, or a copy of exactly its length when it is a view into a larger allocation: zlib's sync output is
 * a slice of a 64 KiB chunk, small buffers are slices of Node's shared pool, and a cached view keeps all of
 * its allocation alive while it weighs only its own length (a 135-byte br answer held 64 KiB: under a flood
 * of distinct URLs the process grew far past the cache's bound, bench section 10).
 */
function exactBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  bytes.copy(copy);
  return copy;
}

/** What the cache keeps of a value: its bytes (a Buffer, or a composed answer's `body`) owned exactly. */
function ownBytes(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return exactBytes(value);
  const body = (value as { body?: unknown } | null)?.body;
  if (Buffer.isBuffer(body)) (value as { body: Buffer }).body = exactBytes(body);
  return value;
}

/**
 * @example
 * const cache = new ByteCache({ maxBytes: 64 * 2 ** 20 });
 * const bytes = await cache.getOrLoad(cacheKey.range(objectId, [0, 4096]), async () => {
 *   const body = await read();
 *   return body && { value: body, weight: body.byteLength };
 * });
 */
export class ByteCache {
  readonly maxBytes: number;
  readonly #lru: LRUCache<string, Entry> | undefined;
  /** Loads in flight: concurrent misses of one key share a single load. */
  readonly #loading = new Map<string, Promise<unknown>>();
  #hits = 0;
  #misses = 0;

  constructor(options: ByteCacheOptions) {
    this.maxBytes = Math.max(0, Math.floor(options.maxBytes));
    this.#lru =
      this.maxBytes > 0
        ? new LRUCache<string, Entry>({
            maxSize: this.maxBytes,
            maxEntrySize: Math.max(1, Math.floor(this.maxBytes * LARGEST_SHARE)),
            sizeCalculation: (entry, key) => Math.max(0, entry.weight) + key.length + ENTRY_OVERHEAD_BYTES,
          })
        : undefined;
  }

  /** The cached value of `key` (and it becomes the most recently used), or `undefined`. */
  get<T>(cacheKey: string): T | undefined {
    const value = this.hit<T>(cacheKey);
    if (value === undefined) this.#misses++;
    return value;
  }

  /**
   * The cached value of `key` when it is held (a hit, and it becomes the most recently used); a value not
   * held is not counted as a miss: for a fast path that falls back to {@link getOrLoad}, which counts it.
   */
  hit<T>(cacheKey: string): T | undefined {
    const entry = this.#lru?.get(cacheKey);
    if (entry === undefined) return undefined;
    this.#hits++;
    return entry.value as T;
  }

  /**
   * Keep `value` under `key`, weighing `weight` bytes: what the value's bytes take (the cache adds its key and
   * {@link ENTRY_OVERHEAD_BYTES}); values over a quarter of the cache are not kept.
   */
  set(cacheKey: string, value: unknown, weight: number): void {
    if (this.#lru) this.#lru.set(cacheKey, { value: ownBytes(value), weight });
  }

  /**
   * The cached value of `key`, or the result of `load` (then cached). `load` returns `undefined` for
   * "nothing to cache" (not found); that and a rejection are passed on and never cached. Concurrent calls
   * for one key share one load.
   */
  async getOrLoad<T>(
    key: string,
    load: () => Promise<{ value: T; weight: number } | undefined>,
  ): Promise<T | undefined> {
    const cached = this.get<T>(key);
    if (cached !== undefined) return cached;
    const pending = this.#loading.get(key) as Promise<T | undefined> | undefined;
    if (pending) return pending;
    const loading = load()
      .then((loaded) => {
        if (loaded === undefined) return undefined;
        this.set(key, loaded.value, loaded.weight);
        return loaded.value;
      })
      .finally(() => this.#loading.delete(key));
    this.#loading.set(key, loading);
    return loading;
  }

  stats(): ByteCacheStats {
    return {
      bytes: this.#lru?.calculatedSize ?? 0,
      entries: this.#lru?.size ?? 0,
      hits: this.#hits,
      misses: this.#misses,
    };
  }
}

/**
 * Share of the Lambda's memory the byte cache may use by default: half. Under a Zipf-like spread over the
 * 25,000-module catalogue (bench/cache-spread.ts) a quarter of a 512 MB function (128 MB) answered 73 %
 * of requests with no object read, half (256 MB) 88–92 %, which the ranges it keeps make possible: other
 * selections of a hot page are composed without a read. Half of 512 MB peaks at 427–454 MB under the flood
 * below, and at 477 MB under the worst one found (240,000 distinct tiny first pages).
 */
const LAMBDA_MEMORY_SHARE = 0.5;
/**
 * What the process needs besides the byte cache's size: Node.js and the code (~60 MB), the young
 * generation that Lambda's heap flags let grow to 64 MB under load, the key cache and parse memo, requests in
 * flight, and malloc's fragmentation. Measured with the heap flags of a 512 MB function (bench section 10):
 * under a flood of 20,000 distinct URLs the process peaked at the cache + 171–198 MB (220 MB with a 32 MB cache,
 * 427–454 MB with 256 MB); under 240,000 distinct first pages of 1–3 modules, the cache + 221 MB (477 MB).
 */
export const PROCESS_BESIDES_CACHE_MB = 192;
/** Kept free on top of that: a longer flood, other data. */
export const HEADROOM_MB = 32;
/** Default outside Lambda (`npm start`, tests). */
const DEFAULT_MAX_MB = 64;

/**
 * The byte cache's default size in bytes (`BYTE_CACHE_MB`, read by loadConfig, overrides it). On Lambda
 * (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`): half the function's memory, but never more than what the memory leaves
 * once the process's own 192 MB and 32 MB of headroom are set aside — 256 MB of a 512 MB function (which then
 * peaks at 427–477 MB), 160 MB at 384 MB, 32 MB at 256 MB, none at 128 MB. Elsewhere 64 MB.
 * @example defaultByteCacheBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }) // → 268435456
 */
export function defaultByteCacheBytes(env: Record<string, string | undefined>): number {
  // Lambda's own variable, always a size in MB there; unset (or anything else) is not Lambda.
  const memory = integerSetting(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', { fallback: 0, min: 0, max: 10_240 });
  const lambdaMb = memory.ok ? memory.value : 0;
  if (lambdaMb === 0) return DEFAULT_MAX_MB * 2 ** 20;
  const share = Math.floor(lambdaMb * LAMBDA_MEMORY_SHARE);
  const room = Math.floor(lambdaMb - PROCESS_BESIDES_CACHE_MB - HEADROOM_MB);
  return Math.max(0, Math.min(share, room)) * 2 ** 20;
}
