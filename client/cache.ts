/**
 * The ETag cache: what the client keeps of each 200 so that the next read of the same URL can be a
 * conditional request, answered with a body-less 304. Pluggable ({@link EtagCache}); in memory by default.
 */

/** What the client keeps of an answer: its entity tag and its body text (parsed again on each 304). */
export interface CacheEntry {
  etag: string;
  body: string;
}

/**
 * A place to keep entries. `key` is `<hash of the API key> <URL>`, never the key itself, so clients with
 * different keys can share one cache without seeing each other's entries. Either method may be async.
 */
export interface EtagCache {
  get(key: string): CacheEntry | undefined | Promise<CacheEntry | undefined>;
  set(key: string, entry: CacheEntry): void | Promise<void>;
}

/** Entries kept by {@link MemoryEtagCache} unless told otherwise. */
export const DEFAULT_CACHE_ENTRIES = 1000;

/**
 * A bounded in-memory cache, least recently used first out, by number of entries.
 * @example const shared = new MemoryEtagCache({ maxEntries: 5000 });
 *   new CatalogueClient({ baseUrl, apiKey, cache: shared });
 */
export class MemoryEtagCache implements EtagCache {
  readonly maxEntries: number;
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  readonly #entries = new Map<string, CacheEntry>();

  constructor(options: { maxEntries?: number } = {}) {
    const maxEntries = options.maxEntries ?? DEFAULT_CACHE_ENTRIES;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError('maxEntries must be a positive integer');
    }
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): CacheEntry | undefined {
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CacheEntry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    while (this.#entries.size > this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
  }
}

/**
 * A non-secret identity of an API key for cache keys: base64url of SHA-256 over a fixed label and the key
 * (Web Crypto, in Node ≥ 20 and browsers alike).
 * @example await keyIdentity('pk_live_…') // → 'Xq3…' (43 characters)
 */
export async function keyIdentity(apiKey: string): Promise<string> {
  const bytes = new TextEncoder().encode(`catalogue-client-cache\u0000${apiKey}`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
