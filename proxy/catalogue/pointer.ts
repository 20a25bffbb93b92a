/**
 * The live pointer, kept in memory. The pointer object (`current.json`, a few KB whatever the catalogue's
 * size: it names the index shards) is re-checked at most every `ttlMs` with a conditional read, so an
 * unchanged catalogue costs one small request per interval and no parsing; concurrent requests share one
 * refresh. After a publish only the shards the new pointer names and the container does not hold yet are
 * read, when a request needs them.
 *
 * A pointer is taken only when its bytes are exactly what the builder writes for it (its version is the hash
 * of its content: store/pointer.ts readPointer). When a re-check fails — the store fails or throttles
 * (`SlowDown`), or answers bytes that are not an intact pointer (a torn overwrite, a damaged read) — the last
 * known pointer keeps serving until it is {@link STALE_FACTOR} × `ttlMs` old (5 minutes at the default
 * 5 s): its objects stay readable that long, since superseded versions are retained for 24 h. Past that, or
 * with no pointer known, the failure is the store's (503 origin_unavailable). After a store fault the
 * pointer is not asked for again before a TTL has passed (requests meanwhile answer at once); a damaged read
 * is tried again by the next request. Nothing runs between requests (no timer).
 */

import { DependencyError } from '../../store/errors.js';
import type { GetOptions, GetOutcome } from '../../store/objects/interface.js';
import { type Pointer, readPointer } from '../../store/pointer.js';

export type PointerOutcome = { ok: true; pointer: Pointer } | { ok: false; reason: string };

export interface PointerOptions {
  /** Reads the pointer object (timeouts and fault mapping are the caller's). */
  read: (options: GetOptions) => Promise<GetOutcome>;
  ttlMs: number;
  /** Milliseconds of the clock the TTL is measured with. */
  now: () => number;
}

/** How many TTLs the last known pointer serves on when re-checks fail. */
export const STALE_FACTOR = 60;
/** Reads of a pointer whose bytes are not intact before that is a fault (one more, as for a transient one). */
const POINTER_READS = 2;

interface Cached {
  pointer: Pointer;
  etag: string;
  /** When the store last confirmed this pointer (a read or a 304). */
  checkedAt: number;
  /** After a re-check the store failed (throttling, a fault): no new try before this time. */
  retryAt: number;
}

/** The pointer read twice, and twice its bytes were not an intact pointer (a torn overwrite, damage). */
class PointerIntegrityError extends DependencyError {
  override name = 'PointerIntegrityError';
}

/**
 * @example
 * const pointer = new PointerCache({ read: (o) => store.get('current.json', o), ttlMs: 5000, now: Date.now });
 * const outcome = await pointer.current(); // → { ok: true, pointer } or { ok: false, reason: 'no published catalogue' }
 */
export class PointerCache {
  #cached: Cached | undefined;
  #refresh: Promise<PointerOutcome> | undefined;

  constructor(readonly options: PointerOptions) {}

  /** The pointer when it was checked less than `ttlMs` ago; `undefined` when only `current()` can tell. */
  fresh(): Pointer | undefined {
    const cached = this.#cached;
    if (!cached) return undefined;
    const now = this.options.now();
    if (now - cached.checkedAt < this.options.ttlMs) return cached.pointer;
    // The store failed the last re-check a moment ago: not asked again (S3 throttling asks for less) until
    // a TTL has passed, and meanwhile the last known pointer answers at once.
    return now < cached.retryAt && this.#usable(cached, now) ? cached.pointer : undefined;
  }

  /** The live pointer; rejects with the store's fault when it cannot be read and no usable one is known. */
  current(): Promise<PointerOutcome> {
    const pointer = this.fresh();
    if (pointer) return Promise.resolve({ ok: true, pointer });
    this.#refresh ??= this.#load().finally(() => {
      this.#refresh = undefined;
    });
    return this.#refresh;
  }

  /** Whether the last known pointer may still serve when a re-check fails: confirmed recently enough. */
  #usable(cached: Cached, now: number): boolean {
    return now - cached.checkedAt < STALE_FACTOR * this.options.ttlMs;
  }

  async #load(): Promise<PointerOutcome> {
    try {
      return await this.#check();
    } catch (error) {
      const cached = this.#cached;
      const now = this.options.now();
      if (!cached || !this.#usable(cached, now)) throw error;
      // A torn or damaged read is tried again by the next request; a failing store only after a TTL.
      if (!(error instanceof PointerIntegrityError)) cached.retryAt = now + this.options.ttlMs;
      return { ok: true, pointer: cached.pointer };
    }
  }

  async #check(): Promise<PointerOutcome> {
    for (let read = 1; ; read++) {
      const cached = this.#cached;
      // A read that follows a damaged one asks for the whole object again.
      const result = await this.options.read(cached && read === 1 ? { ifNoneMatch: cached.etag } : {});
      const checkedAt = this.options.now();
      if (!result.ok && result.reason === 'not-modified' && cached) {
        cached.checkedAt = checkedAt;
        return { ok: true, pointer: cached.pointer };
      }
      if (!result.ok) {
        this.#cached = undefined;
        return { ok: false, reason: 'no published catalogue (the pointer object is missing)' };
      }
      const reading = readPointer(result.body);
      if (reading.ok) {
        this.#cached = { pointer: reading.pointer, etag: result.etag, checkedAt, retryAt: 0 };
        return { ok: true, pointer: reading.pointer };
      }
      if (reading.reason === 'unsupported-format') {
        // A builder of another release published: keep serving what we hold (its objects are retained).
        if (cached && this.#usable(cached, checkedAt)) return { ok: true, pointer: cached.pointer };
        return { ok: false, reason: 'the pointer object is of a format this proxy does not read' };
      }
      if (read >= POINTER_READS) {
        throw new PointerIntegrityError('objects', `the pointer failed its integrity check (${read} reads)`);
      }
    }
  }
}
