/**
 * A bounded, short-lived cache in front of a KeyStore, so most requests need no key read.
 * Revocation takes effect within `ttlMs`: an entry expires `ttlMs` after the read that filled it began.
 */
import { DependencyError } from '../errors.js';
import type { KeyRecord, KeyStore } from './interface.js';

export interface CachedKeyStoreOptions {
  /** How long a lookup result is trusted (found and not found alike); 0 disables caching. */
  ttlMs: number;
  /** At most this many hashes are held; the least recently used goes first. */
  maxEntries: number;
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
 * LRU + TTL cache of key lookups. Unknown keys are cached too (a flood of one bad key costs one read per
 * TTL); failures are never cached. Concurrent lookups of one hash share a single read.
 * @example
 * const keys = new CachedKeyStore(new DynamoKeyStore({ client, table }), { ttlMs: 30_000, maxEntries: 10_000 });
 * const record = await keys.lookup(hashKey(presentedKey));
 */
export class CachedKeyStore implements KeyStore {
  readonly #inner: KeyStore;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Map iteration order is insertion order: re-inserting on every hit keeps the oldest first. */
  readonly #entries = new Map<string, Entry>();
  readonly #flights = new Map<string, Promise<KeyRecord | undefined>>();

  constructor(inner: KeyStore, options: CachedKeyStoreOptions) {
    this.#inner = inner;
    this.#ttlMs = Math.max(0, options.ttlMs);
    this.#maxEntries = Math.max(1, options.maxEntries);
    this.#now = options.now ?? Date.now;
  }

  /** Number of cached results (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  lookup(keyHash: string, options: { signal?: AbortSignal } = {}): Promise<KeyRecord | undefined> {
    const now = this.#now();
    const entry = this.#entries.get(keyHash);
    if (entry) {
      this.#entries.delete(keyHash);
      if (entry.expiresAt > now) {
        this.#entries.set(keyHash, entry);
        return Promise.resolve(entry.record);
      }
    }
    let flight = this.#flights.get(keyHash);
    if (!flight) {
      flight = this.#fill(keyHash, now, options.signal);
      this.#flights.set(keyHash, flight);
      // Callers that give up early must not leave the shared read's rejection unhandled.
      flight.catch(() => {});
    }
    return untilAborted(flight, options.signal);
  }

  async #fill(keyHash: string, startedAt: number, signal: AbortSignal | undefined) {
    try {
      const record = await this.#inner.lookup(keyHash, signal ? { signal } : {});
      this.#remember(keyHash, { record, expiresAt: startedAt + this.#ttlMs });
      return record;
    } finally {
      this.#flights.delete(keyHash);
    }
  }

  #remember(keyHash: string, entry: Entry) {
    if (entry.expiresAt <= this.#now()) return;
    this.#entries.delete(keyHash);
    this.#entries.set(keyHash, entry);
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}
