/**
 * A bounded, short-lived cache in front of a KeyStore, so most requests need no key read.
 * Revocation takes effect within `ttlMs`: an entry expires `ttlMs` after the read that filled it began.
 *
 * Accepted keys and refusals (unknown, revoked or expired) live in two separate LRUs: a flood of random well-formed
 * keys fills only the small negative one, and can never push a real key out of the positive one.
 */
import { LRUCache } from 'lru-cache';
import { DependencyError } from '../../store/errors.js';
// The cache's default bounds are a contract with key administration, which says by when a change takes effect.
import { KEY_CACHE_DEFAULTS, type KeyRecord, keyAccepted } from '../../tables/keys.js';
import type { KeyStore } from './interface.js';

export interface CachedKeyStoreOptions {
  /** How long an accepted key's lookup is trusted (the revocation bound); 0 disables caching. */
  ttlMs: number;
  /** At most this many accepted keys are held; the least recently used goes first. */
  maxEntries: number;
  /**
   * How long a refusal (unknown or revoked key) is trusted; capped at `ttlMs`. Short, so a key looked up
   * just before it was issued is accepted soon after.
   * @default 10_000
   */
  negativeTtlMs?: number;
  /**
   * At most this many refusals are held, apart from the accepted keys.
   * @default 1_000
   */
  negativeMaxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

interface Entry {
  record: KeyRecord | undefined;
  expiresAt: number;
}

/**
 * Settle with `promise`, or reject as soon as this caller's `signal` aborts. The shared read itself runs
 * under the signal of the caller that started it, so a hung connection cannot pin a flight forever.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  const aborted = () => new DependencyError('keys', 'key lookup aborted', { cause: signal.reason });
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * LRU + TTL cache of key lookups. Refusals are cached too (a flood of one bad key costs one read per
 * negative TTL), in their own bounded LRU; failures are never cached. Concurrent lookups of one hash share
 * a single read.
 * @example
 * const keys = new CachedKeyStore(new DynamoKeyStore({ client, table }), { ttlMs: 30_000, maxEntries: 10_000 });
 * const record = await keys.lookup(hashApiKey(presentedKey));
 */
export class CachedKeyStore implements KeyStore {
  readonly #inner: KeyStore;
  readonly #ttlMs: number;
  readonly #negativeTtlMs: number;
  readonly #now: () => number;
  /** Expiry is checked against the injected clock, so the LRUs only bound the number of entries. */
  readonly #accepted: LRUCache<string, Entry>;
  readonly #refused: LRUCache<string, Entry>;
  readonly #flights = new Map<string, Promise<KeyRecord | undefined>>();

  constructor(inner: KeyStore, options: CachedKeyStoreOptions) {
    this.#inner = inner;
    this.#ttlMs = Math.max(0, options.ttlMs);
    this.#negativeTtlMs = Math.min(
      this.#ttlMs,
      Math.max(0, options.negativeTtlMs ?? KEY_CACHE_DEFAULTS.negativeTtlMs),
    );
    this.#now = options.now ?? Date.now;
    this.#accepted = new LRUCache({ max: Math.max(1, options.maxEntries) });
    this.#refused = new LRUCache({ max: Math.max(1, options.negativeMaxEntries ?? 1_000) });
  }

  /** Number of cached accepted keys (for tests and metrics). */
  get size(): number {
    return this.#accepted.size;
  }

  /** Number of cached refusals (for tests and metrics). */
  get refusedSize(): number {
    return this.#refused.size;
  }

  known(keyHash: string): KeyRecord | null | undefined {
    return this.#knownAt(keyHash, this.#now());
  }

  lookup(keyHash: string, options: { signal?: AbortSignal } = {}): Promise<KeyRecord | undefined> {
    const now = this.#now();
    const known = this.#knownAt(keyHash, now);
    if (known !== undefined) return Promise.resolve(known ?? undefined);
    let flight = this.#flights.get(keyHash);
    if (!flight) {
      flight = this.#fill(keyHash, now, options.signal);
      this.#flights.set(keyHash, flight);
      // Callers that give up early must not leave the shared read's rejection unhandled.
      flight.catch(() => {});
    }
    return untilAborted(flight, options.signal);
  }

  #knownAt(keyHash: string, now: number): KeyRecord | null | undefined {
    const cached = this.#fresh(this.#accepted, keyHash, now) ?? this.#fresh(this.#refused, keyHash, now);
    return cached && (cached.record ?? null);
  }

  /** A live entry of `cache` (marked most recently used), dropping it once expired. */
  #fresh(cache: LRUCache<string, Entry>, keyHash: string, now: number): Entry | undefined {
    const entry = cache.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry;
    cache.delete(keyHash);
    return undefined;
  }

  async #fill(keyHash: string, startedAt: number, signal: AbortSignal | undefined) {
    try {
      const record = await this.#inner.lookup(keyHash, signal ? { signal } : {});
      // An expired key is a refusal like a revoked one. A key that expires while cached is still refused:
      // the request path checks the record's expiry on every request.
      const accepted = record !== undefined && keyAccepted(record, this.#now());
      const expiresAt = startedAt + (accepted ? this.#ttlMs : this.#negativeTtlMs);
      // A key that changed side (revoked, or issued after a refusal) must not be found in the other LRU.
      (accepted ? this.#refused : this.#accepted).delete(keyHash);
      if (expiresAt > this.#now())
        (accepted ? this.#accepted : this.#refused).set(keyHash, { record, expiresAt });
      return record;
    } finally {
      this.#flights.delete(keyHash);
    }
  }
}
