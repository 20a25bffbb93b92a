/**
 * The live catalogue index, kept in memory. The pointer object (`current.json`) is re-checked at most every
 * `ttlMs` with a conditional read, so an unchanged catalogue costs one small request per interval and no
 * parsing; concurrent requests share one refresh.
 */
import { type CatalogueIndex, FORMAT_VERSION } from '../format.js';
import type { GetOptions, GetResult } from '../objects/interface.js';

export type IndexOutcome = { ok: true; index: CatalogueIndex } | { ok: false; reason: string };

export interface PointerOptions {
  /** Reads the pointer object (timeouts and fault mapping are the caller's). */
  read: (options: GetOptions) => Promise<GetResult>;
  ttlMs: number;
  /** Milliseconds of the clock the TTL is measured with. */
  now: () => number;
}

interface Cached {
  index: CatalogueIndex;
  etag: string;
  checkedAt: number;
}

/**
 * @example
 * const pointer = new PointerCache({ read: (o) => store.get('current.json', o), ttlMs: 5000, now: Date.now });
 * const outcome = await pointer.current(); // → { ok: true, index } or { ok: false, reason: 'no published catalogue' }
 */
export class PointerCache {
  #cached: Cached | undefined;
  #refresh: Promise<IndexOutcome> | undefined;

  constructor(readonly options: PointerOptions) {}

  /** The live index; rejects with the store's fault when the pointer cannot be read. */
  current(): Promise<IndexOutcome> {
    const cached = this.#cached;
    if (cached && this.options.now() - cached.checkedAt < this.options.ttlMs) {
      return Promise.resolve({ ok: true, index: cached.index });
    }
    this.#refresh ??= this.#load().finally(() => {
      this.#refresh = undefined;
    });
    return this.#refresh;
  }

  async #load(): Promise<IndexOutcome> {
    const cached = this.#cached;
    const result = await this.options.read(cached ? { ifNoneMatch: cached.etag } : {});
    const checkedAt = this.options.now();
    if (result.status === 'not-modified' && cached) {
      cached.checkedAt = checkedAt;
      return { ok: true, index: cached.index };
    }
    if (result.status !== 'ok') {
      this.#cached = undefined;
      return { ok: false, reason: 'no published catalogue (the pointer object is missing)' };
    }
    const index = parseIndex(result.body);
    if (!index) {
      // A store without atomic overwrites (s3rver rewrites in place) can hand out a half-written pointer
      // during a publish: keep serving the version we hold and read the pointer again at the next request.
      if (cached) return { ok: true, index: cached.index };
      return { ok: false, reason: 'the pointer object is not a catalogue index of this format' };
    }
    this.#cached = { index, etag: result.etag, checkedAt };
    return { ok: true, index };
  }
}

/** The index, when `bytes` hold one of {@link FORMAT_VERSION}. This is the only JSON the proxy parses. */
export function parseIndex(bytes: Buffer): CatalogueIndex | undefined {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const index = value as Partial<CatalogueIndex> | null;
  const isMap = (map: unknown) => typeof map === 'object' && map !== null && !Array.isArray(map);
  if (
    !isMap(index) ||
    index?.format !== FORMAT_VERSION ||
    typeof index.version !== 'string' ||
    !isMap(index.lists) ||
    !isMap(index.modules) ||
    !isMap(index.manufacturers)
  ) {
    return undefined;
  }
  return index as CatalogueIndex;
}
