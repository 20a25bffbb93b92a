/**
 * The live pointer, kept in memory. The pointer object (`current.json`, a few KB whatever the catalogue's
 * size: it names the index shards) is re-checked at most every `ttlMs` with a conditional read, so an
 * unchanged catalogue costs one small request per interval and no parsing; concurrent requests share one
 * refresh. After a publish only the shards the new pointer names and the container does not hold yet are
 * read, when a request needs them.
 */

import type { GetOptions, GetOutcome } from '../../store/objects/interface.js';
import { type Pointer, parsePointer } from '../../store/pointer.js';

export type PointerOutcome = { ok: true; pointer: Pointer } | { ok: false; reason: string };

export interface PointerOptions {
  /** Reads the pointer object (timeouts and fault mapping are the caller's). */
  read: (options: GetOptions) => Promise<GetOutcome>;
  ttlMs: number;
  /** Milliseconds of the clock the TTL is measured with. */
  now: () => number;
}

interface Cached {
  pointer: Pointer;
  etag: string;
  checkedAt: number;
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
    return cached && this.options.now() - cached.checkedAt < this.options.ttlMs ? cached.pointer : undefined;
  }

  /** The live pointer; rejects with the store's fault when it cannot be read. */
  current(): Promise<PointerOutcome> {
    const pointer = this.fresh();
    if (pointer) return Promise.resolve({ ok: true, pointer });
    this.#refresh ??= this.#load().finally(() => {
      this.#refresh = undefined;
    });
    return this.#refresh;
  }

  async #load(): Promise<PointerOutcome> {
    const cached = this.#cached;
    const result = await this.options.read(cached ? { ifNoneMatch: cached.etag } : {});
    const checkedAt = this.options.now();
    if (!result.ok && result.reason === 'not-modified' && cached) {
      cached.checkedAt = checkedAt;
      return { ok: true, pointer: cached.pointer };
    }
    if (!result.ok) {
      this.#cached = undefined;
      return { ok: false, reason: 'no published catalogue (the pointer object is missing)' };
    }
    const pointer = parsePointer(result.body);
    if (!pointer) {
      // A store without atomic overwrites (s3rver rewrites in place) can hand out a half-written pointer
      // during a publish: keep serving the version we hold and read the pointer again at the next request.
      if (cached) return { ok: true, pointer: cached.pointer };
      return { ok: false, reason: 'the pointer object is not a catalogue pointer of this format' };
    }
    this.#cached = { pointer, etag: result.etag, checkedAt };
    return { ok: true, pointer };
  }
}
