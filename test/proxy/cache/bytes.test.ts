/**
 * The byte cache's bound (proxy/cache/bytes.ts) is on memory, not only on the bytes its callers weigh: a flood of
 * distinct tiny answers holds no more than the bound, measured on the heap after a full collection; large values
 * are bounded by their bytes; a value that is a view into a larger allocation is kept as its own bytes.
 */
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ByteCache, cacheKey, ENTRY_OVERHEAD_BYTES } from '../../../proxy/cache/bytes.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** What the process holds on the V8 heap and outside it (Buffers), after full collections. */
function held(): number {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const MiB = 2 ** 20;

describe('the byte cache', () => {
  it('holds no more memory than its bound under a flood of distinct tiny answers', () => {
    const maxBytes = 4 * MiB;
    const cache = new ByteCache({ maxBytes });
    const before = held();
    // As a flood of `limit=1&fields=id` pages over every index object would: composed answers, their ranges and
    // coded forms, each a few bytes, each under a key of its own.
    for (let i = 0; i < 100_000; i++) {
      const id = randomBytes(16).toString('base64url');
      const body = randomBytes(16);
      if (i % 3 === 0)
        cache.set(cacheKey.firstPage(id, 1, 1, 'modules/id'), { ok: true, body, etag: `"${id}"` }, 16);
      else if (i % 3 === 1) cache.set(cacheKey.range(id, [0, 16]), body, 16);
      else cache.set(cacheKey.coded(`"${id}"`, 'br'), body, 16);
    }
    const growth = held() - before;
    const { bytes, entries } = cache.stats();
    expect(growth).toBeLessThanOrEqual(maxBytes);
    expect(bytes).toBeLessThanOrEqual(maxBytes);
    // Each entry counts its overhead: a few thousand are kept, not all 100,000.
    expect(entries).toBeLessThan(maxBytes / ENTRY_OVERHEAD_BYTES);
  });

  it('bounds large values by their bytes, and keeps none over a quarter of the bound', () => {
    const maxBytes = 4 * MiB;
    const cache = new ByteCache({ maxBytes });
    for (let i = 0; i < 10; i++)
      cache.set(cacheKey.range(`object-${i}`), Buffer.alloc(900 * 1024, i), 900 * 1024);
    expect(cache.stats().entries).toBe(4);
    expect(cache.stats().bytes).toBeLessThanOrEqual(maxBytes);
    // The four most recent are the ones kept.
    expect(cache.get<Buffer>(cacheKey.range('object-9'))?.[0]).toBe(9);
    expect(cache.get(cacheKey.range('object-5'))).toBeUndefined();
    cache.set(cacheKey.range('huge'), Buffer.alloc(MiB + 1), MiB + 1);
    expect(cache.get(cacheKey.range('huge'))).toBeUndefined();
    expect(cache.stats().entries).toBe(4);
  });

  it('keeps a view into a larger allocation as a copy of its own bytes', () => {
    const cache = new ByteCache({ maxBytes: MiB });
    const chunk = Buffer.alloc(64 * 1024, 7);
    cache.set(cacheKey.coded('"e"', 'br'), chunk.subarray(100, 235), 135);
    cache.set(cacheKey.detail('o', 1), { ok: true, body: chunk.subarray(0, 10), etag: '"d"' }, 10);
    const coded = cache.get<Buffer>(cacheKey.coded('"e"', 'br'))!;
    const detail = cache.get<{ body: Buffer }>(cacheKey.detail('o', 1))!;
    expect(coded.buffer.byteLength).toBe(135);
    expect(detail.body.buffer.byteLength).toBe(10);
    expect(coded.equals(chunk.subarray(100, 235))).toBe(true);
  });
});
