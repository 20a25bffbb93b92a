/**
 * Conditional requests against a scripted server: If-None-Match from the ETag cache, the cached record on a
 * 304 (with the 304's rate-limit headers), isolation between API keys sharing a cache, and the LRU bound.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type CacheEntry,
  CatalogueClient,
  type CatalogueClientOptions,
  type EtagCache,
  MemoryEtagCache,
} from '../../client/index.js';
import { RATE_HEADERS, type ScriptedServer, startScripted } from './scripted.js';

const KEY_A = `pk_live_${'A'.repeat(22)}`;
const KEY_B = `pk_live_${'B'.repeat(22)}`;
const MODULE = { data: { id: 101, name: 'A-110-1', manufacturer_id: 1, hp: 8, standard: 0 } };
const fresh = (etag: string, remaining = 59) => ({
  status: 200,
  headers: { etag, ...RATE_HEADERS(remaining) },
  body: MODULE,
});
const notModified = (etag: string, remaining: number) => ({
  status: 304,
  headers: { etag, ...RATE_HEADERS(remaining) },
});

let api: ScriptedServer;
beforeEach(async () => {
  api = await startScripted();
});
afterEach(async () => {
  await api.close();
});

const client = (options: Partial<CatalogueClientOptions> = {}) =>
  new CatalogueClient({ baseUrl: api.baseUrl, apiKey: KEY_A, ...options });

describe('revalidation', () => {
  it('sends If-None-Match with the cached ETag and returns the cached record on 304', async () => {
    // Prepare
    api.script(fresh('"e1"', 59), notModified('"e1"', 58));
    const tested = client();

    // Act
    const first = await tested.modules.get(101);
    const second = await tested.modules.get(101);

    // Assess
    expect(second).toEqual(first);
    expect(second).not.toBe(first); // a fresh copy: mutating one answer cannot change the next
    expect(api.requests[0]!.headers['if-none-match']).toBeUndefined();
    expect(api.requests[1]!.headers['if-none-match']).toBe('"e1"');
    expect(tested.rateLimit).toEqual({
      limitMinute: 60,
      remainingMinute: 58,
      limitMonth: 5000,
      remainingMonth: 4058,
      reset: 1795000000,
    });
  });

  it('keeps the new body and ETag after a 200 that replaced the representation', async () => {
    api.script(
      fresh('"e1"'),
      { ...fresh('"e2"'), body: { data: { id: 101, name: 'renamed' } } },
      notModified('"e2"', 5),
    );
    const tested = client();

    await tested.modules.get(101);
    await tested.modules.get(101);
    const third = await tested.modules.get(101);

    expect(api.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"e1"', '"e2"']);
    expect(third.name).toBe('renamed');
  });

  it('cache: false never sends If-None-Match', async () => {
    api.script(fresh('"e1"'), fresh('"e1"'));
    const tested = client({ cache: false });

    await tested.modules.get(101);
    await tested.modules.get(101);

    expect(api.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, undefined]);
  });

  it('one URL, one entry: list parameters in another order hit the same entry', async () => {
    const list = { status: 200, headers: { etag: '"l1"' }, body: { data: [], page: { next_cursor: null } } };
    api.script(list, { status: 304, headers: { etag: '"l1"' } });
    const tested = client();

    await tested.modules.listPage({ fields: ['name', 'hp'], sort: 'name' });
    const again = await tested.modules.listPage({ sort: 'name', fields: ['hp', 'name', 'hp'] });

    expect(again).toEqual({ data: [], nextCursor: null, next_cursor: null });
    expect(api.requests[1]!.headers['if-none-match']).toBe('"l1"');
  });
});

describe('a shared cache', () => {
  it('never serves one key the entries of another, and never stores a key', async () => {
    // Prepare: a recording cache shared by two clients with different keys.
    const inner = new MemoryEtagCache();
    const keys: string[] = [];
    const shared: EtagCache = {
      get: async (key) => {
        keys.push(key);
        return inner.get(key);
      },
      set: async (key: string, entry: CacheEntry) => {
        keys.push(key);
        inner.set(key, entry);
      },
    };
    api.script(fresh('"e1"'), fresh('"e1"'), notModified('"e1"', 1));
    const a = client({ cache: shared });
    const b = client({ cache: shared, apiKey: KEY_B });

    // Act
    await a.modules.get(101);
    await b.modules.get(101);
    await a.modules.get(101);

    // Assess
    expect(api.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, undefined, '"e1"']);
    expect(inner.size).toBe(2);
    for (const key of keys) {
      expect(key).not.toContain('pk_live_');
      expect(key).toMatch(/^[A-Za-z0-9_-]{43} http:\/\/127\.0\.0\.1:\d+\/v1\/modules\/101$/);
    }
    expect(new Set(keys.map((key) => key.split(' ')[0])).size).toBe(2);
  });
});

describe('MemoryEtagCache', () => {
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new MemoryEtagCache({ maxEntries: 2 });
    const entry = (etag: string) => ({ etag, body: '{}' });

    cache.set('a', entry('"a"'));
    cache.set('b', entry('"b"'));
    cache.get('a'); // a is now the most recently used
    cache.set('c', entry('"c"'));

    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.etag).toBe('"a"');
    expect(cache.get('c')?.etag).toBe('"c"');
  });

  it('is on by default and bounded', () => {
    expect(() => new MemoryEtagCache({ maxEntries: 0 })).toThrow('maxEntries must be a positive integer');
    expect(new MemoryEtagCache().maxEntries).toBe(1000);
  });
});
