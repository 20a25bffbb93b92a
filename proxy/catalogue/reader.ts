/**
 * Plans → bytes: the catalogue's read path. Per request at most two object reads — the index shard that
 * names the answer's object, and the object's bytes (one range) — plus the pointer re-check when it is due;
 * in a warm container none at all, because everything read is immutable and kept in the byte cache: index
 * shards (parsed), data ranges, and composed answers with their ETags. A cursor page's 304 is decided from
 * the cursor alone, before any read; other answers carry the ETag of their bytes, so it changes exactly when
 * what the consumer sees changes.
 *
 * Integrity: no byte reaches a consumer or the byte cache unless it is what the builder wrote. The pointer is
 * taken only when intact (pointer.ts); a shard or a detail must hash to its object id; a list's range must
 * hash to the digest the format records for it — a first page's in the index entry, a cursor page's in its
 * cursor (store/segments.ts). A mismatch is read once more, as a transient fault is retried, then it is the
 * store's fault (DependencyError: 503 origin_unavailable, logged, never cached). Checked bytes are cached, so
 * a warm container's hot answer checks nothing. Objects of format 2 record no digests for ranges of lists of
 * more than one segment: those are read unverified, and neither they nor what is composed from them is ever
 * cached.
 */
import { createHash } from 'node:crypto';
import { DependencyError } from '../../store/errors.js';
import { digest128, FORMAT_VERSION, objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import type { GetOptions, ObjectStore } from '../../store/objects/interface.js';
import { type IndexEntry, type ListEntry, type Pointer, parseShard, shardHash } from '../../store/pointer.js';
import { detailKey } from '../../store/schema.js';
import { FormatError, SEGMENT_SIZE } from '../../store/segments.js';
import { ByteCache, cacheKey } from '../cache/bytes.js';
import { callWithDeadline } from '../core/deadline.js';
import type { IfNoneMatch } from '../http/coding.js';
import { type ApiError, apiError } from '../http/errors.js';
import { etagFor, etagOfBytes } from '../http/etag.js';
import type { DetailPlan, ListPlan, Plan } from '../request/plan.js';
import { composeDetail, composeListPage, EMPTY_LIST_BODY, type PageRequest } from './compose.js';
import { type CursorState, decodeCursor, encodeCursor, INVALID_CURSOR_MESSAGE } from './cursor.js';
import { PointerCache } from './pointer.js';

export type ReadOutcome =
  | { ok: true; body: Buffer; etag: string }
  /** `etag`: the tag the request's If-None-Match matched (identity or a coding's, see core/coding.ts). */
  | { ok: false; reason: 'not-modified'; etag: string }
  | ReadRefusal;

/** An error answer instead of data: `not_found`, `invalid_parameter` (a bad cursor), `configuration_error`. */
type ReadRefusal = { ok: false; reason: 'refused'; error: ApiError };

export interface CatalogueOptions {
  objects: ObjectStore;
  /** Key prefix of the published catalogue ('' or ending in '/'). */
  prefix: string;
  cursorSecret: string;
  pointerTtlMs: number;
  dependencyTimeoutMs: number;
  /** Clock in milliseconds (the pointer's TTL). */
  now: () => number;
  /** Where immutable bytes are kept between requests; a small private one when absent. */
  cache?: ByteCache;
}

/**
 * A composed answer, kept in the byte cache under what selects its bytes; shaped as the outcome it answers, so a
 * held answer is returned as it is kept (no object per request).
 */
interface Composed {
  ok: true;
  body: Buffer;
  etag: string;
}

/**
 * What a plan alone decides, worked out once per plan. The core memoizes the plans of hot request lines, so a
 * hot request hashes nothing here: neither its index key nor, on a cursor page, its cursor's MAC and ETag.
 */
interface PlanFacts {
  /** The plan's key in the index, and the hash that places it in a shard ({@link shardHash}). */
  indexKey: string;
  indexHash: number;
  /** A cursor page's state, ETag and byte-cache key; `undefined` when its cursor is not valid for the plan. */
  cursor?: { state: CursorState; etag: string; cacheKey: string } | undefined;
  /**
   * A first page's or a detail's byte-cache keys under the pointer it was last answered under: its shard's
   * and its composed answer's. Kept as strings whose hash V8 has already worked out, so a hot answer builds
   * and hashes no key.
   */
  held?: { pointer: Pointer; shardKey: string; answerKey: string } | undefined;
}

/** A parsed shard weighs more than its bytes: keys and entries become strings and arrays. */
const SHARD_WEIGHT_FACTOR = 3;
/** Reads of bytes that fail their check before that is the store's fault: one more, as for a transient one. */
const INTEGRITY_READS = 2;
const DEFAULT_CACHE_BYTES = 16 * 2 ** 20;

/**
 * @example
 * const catalogue = new Catalogue({ objects, prefix: '', cursorSecret, pointerTtlMs: 5000, dependencyTimeoutMs: 2000, now: Date.now });
 * await catalogue.read(plan, ifNoneMatchFor(request.headers['if-none-match'], accepted)); // → { ok: true, body, etag } | …
 */
export class Catalogue {
  readonly #options: CatalogueOptions;
  readonly #pointer: PointerCache;
  /** Cursors in a body depend on the secret: rotating it must change list ETags. */
  readonly #secretFingerprint: string;
  readonly #cache: ByteCache;
  /** Per plan object; an entry goes when its plan does (the core's memo bounds how many stay). */
  readonly #facts = new WeakMap<Plan, PlanFacts>();

  constructor(options: CatalogueOptions) {
    this.#options = options;
    this.#cache = options.cache ?? new ByteCache({ maxBytes: DEFAULT_CACHE_BYTES });
    this.#pointer = new PointerCache({
      read: (get) => this.#get(`${options.prefix}${POINTER_KEY}`, get),
      ttlMs: options.pointerTtlMs,
      now: options.now,
    });
    this.#secretFingerprint = createHash('sha256')
      .update(options.cursorSecret)
      .digest('base64url')
      .slice(0, 8);
  }

  /**
   * Answer a plan: at once when the container holds everything the answer needs (a fresh pointer, the shard
   * that names its object, the composed answer: a warm container's hot requests), else once it is read.
   * Throws or rejects with {@link DependencyError} when the object store fails; every other outcome is a
   * value (`configuration_error` when nothing is published, `not_found`, `invalid_parameter` for a bad cursor).
   */
  read(plan: Plan, ifNoneMatch: IfNoneMatch): ReadOutcome | Promise<ReadOutcome> {
    if (plan.kind === 'list' && plan.cursor !== undefined) return this.#laterPage(plan, ifNoneMatch);
    return this.#held(plan, ifNoneMatch) ?? this.#loaded(plan, ifNoneMatch);
  }

  /** A first page or a detail from what the container holds; `undefined` when something must be read. */
  #held(plan: ListPlan | DetailPlan, ifNoneMatch: IfNoneMatch): ReadOutcome | undefined {
    const pointer = this.#pointer.fresh();
    if (!pointer) return undefined;
    const facts = this.#factsOf(plan);
    const held = facts.held;
    if (held?.pointer === pointer) {
      // The shard is touched as before (it stays as recently used as the answers it names).
      if (this.#cache.hit(held.shardKey) === undefined) return undefined;
      const composed = this.#cache.hit<Composed>(held.answerKey);
      return composed && answer(composed, ifNoneMatch);
    }
    const shardKey = cacheKey.shard(shardIdOf(pointer, facts));
    const shard = this.#cache.hit<ParsedShard>(shardKey);
    if (!shard) return undefined;
    const resolved = this.#resolve(plan, pointer, entryIn(shard, facts.indexKey), ifNoneMatch);
    if ('outcome' in resolved) return resolved.outcome;
    if (resolved.cacheKey === undefined) return undefined;
    facts.held = { pointer, shardKey, answerKey: resolved.cacheKey };
    const composed = this.#cache.hit<Composed>(resolved.cacheKey);
    return composed && answer(composed, ifNoneMatch);
  }

  /** A first page or a detail, reading the pointer, the shard and the object's bytes it lacks. */
  async #loaded(plan: ListPlan | DetailPlan, ifNoneMatch: IfNoneMatch): Promise<ReadOutcome> {
    const current = await this.#currentEntry(plan);
    if (!current.ok) return current;
    const resolved = this.#resolve(plan, current.pointer, current.entry, ifNoneMatch);
    if ('outcome' in resolved) return resolved.outcome;
    if (resolved.cacheKey === undefined) {
      // Composed from bytes no digest vouches for (format 2): answered, never cached.
      const body = await resolved.compose();
      return answer({ ok: true, body, etag: etagOfBytes(body) }, ifNoneMatch);
    }
    return answer(await this.#composed(resolved.cacheKey, resolved.compose), ifNoneMatch);
  }

  /**
   * What a first page or a detail is, given its index entry: an outcome already (the empty list, a 404), or
   * the composed answer it needs, by its cache key and how to compose it. Throws when the entry is of the
   * wrong kind (the index is the builder's output: an origin fault).
   */
  #resolve(
    plan: ListPlan | DetailPlan,
    pointer: Pointer,
    entry: IndexEntry | undefined,
    ifNoneMatch: IfNoneMatch,
  ): Resolved {
    if (plan.kind === 'detail') {
      if (!entry) {
        const what = plan.resource === 'modules' ? 'module' : 'manufacturer';
        return {
          outcome: {
            ok: false,
            reason: 'refused',
            error: apiError('not_found', `There is no ${what} with id ${plan.id}.`),
          },
        };
      }
      if (typeof entry !== 'string')
        throw new DependencyError('objects', `index entry of ${plan.id} is not a detail`);
      const objectId = entry;
      return {
        cacheKey: cacheKey.detail(objectId, plan.mask),
        compose: async () => {
          // A detail is read whole: its bytes must hash to its object id.
          const bytes = await this.#range(objectId, undefined, objectId);
          if (!bytes)
            throw new DependencyError('objects', `the index names object ${objectId}, which is missing`);
          return originBytes(() => composeDetail(bytes, plan.mask));
        },
      };
    }
    // A filter that matches nothing has no object: the answer is the empty list.
    if (!entry) return { outcome: answer(EMPTY_LIST, ifNoneMatch) };
    if (typeof entry === 'string')
      throw new DependencyError('objects', `index entry of ${plan.variant} is not a list`);
    const [objectId, , segment0End] = entry;
    const digests = listDigests(entry, pointer.format);
    const range = [0, segment0End] as const;
    return {
      // The first page's bytes depend on the object, the selection, and the variant and secret its cursor binds.
      cacheKey: digests.segment0 && cacheKey.firstPage(objectId, plan.limit, plan.mask, plan.variant),
      compose: async () => {
        const bytes = digests.segment0
          ? await this.#range(objectId, range, digests.segment0)
          : await this.#read(objectId, range);
        if (!bytes)
          throw new DependencyError('objects', `the index names object ${objectId}, which is missing`);
        const page: PageRequest = {
          bytes,
          rangeStart: 0,
          objectId,
          offset: 0,
          limit: plan.limit,
          mask: plan.mask,
          pairDigest: digests.pair0,
        };
        return originBytes(() => composeListPage(page, this.#cursorFor(plan)));
      },
    };
  }

  /** A cursor page: its 304 and a held page need no read at all; the cursor pins everything else. */
  #laterPage(plan: ListPlan, ifNoneMatch: IfNoneMatch): ReadOutcome | Promise<ReadOutcome> {
    const cursor = this.#factsOf(plan).cursor;
    if (!cursor)
      return { ok: false, reason: 'refused', error: apiError('invalid_parameter', INVALID_CURSOR_MESSAGE) };
    // The cursor pins an immutable object, so this page's ETag is known without reading anything.
    const { etag } = cursor;
    const matched = ifNoneMatch(etag);
    if (matched) return { ok: false, reason: 'not-modified', etag: matched };
    const verified = cursor.state.digest !== undefined;
    const cached = verified ? this.#cache.get<Composed>(cursor.cacheKey) : undefined;
    if (cached) return cached;
    return this.#composeLaterPage(plan, cursor.state, cursor);
  }

  /**
   * A cursor page from the range its cursor pins. The cursor is intact (its HMAC), so whatever goes wrong
   * from here is the store's fault — a read that fails, bytes that fail their check or do not decode, an
   * object of the current version that is missing — and never `invalid_parameter`; only a range whose object
   * is gone and not the current version's (collected after its version's retention period) tells the
   * consumer to start the walk again.
   */
  async #composeLaterPage(
    plan: ListPlan,
    state: CursorState,
    { etag, cacheKey: key }: { etag: string; cacheKey: string },
  ): Promise<ReadOutcome> {
    const range = [state.rangeStart, state.rangeEnd] as const;
    const bytes =
      state.digest === undefined
        ? await this.#read(state.objectId, range)
        : await this.#range(state.objectId, range, state.digest);
    if (!bytes) return this.#goneObject(plan, state.objectId);
    const { objectId, offset, rangeStart, digest } = state;
    const page: PageRequest = {
      bytes,
      rangeStart,
      objectId,
      offset,
      limit: plan.limit,
      mask: plan.mask,
      pairDigest: digest,
    };
    const body = originBytes(() => composeListPage(page, this.#cursorFor(plan)));
    const composed: Composed = { ok: true, body, etag };
    if (digest !== undefined) this.#cache.set(key, composed, body.byteLength);
    return composed;
  }

  /**
   * A cursor's object that the store does not have. The current version's (its index names that object for
   * the cursor's variant: a publish, a rollback or a store that lost it) must be there: the store's fault,
   * `503 origin_unavailable`, retryable and not counted. Any other object belonged to a superseded version;
   * the builder collects an object only once no retained version references it, so it is taken as collected:
   * `400 invalid_parameter`, the walk must start again. (The proxy reads no version list: an object a retained
   * superseded version still references, lost by the store, is answered the same way, and starting again on
   * the current version is then right too.) Costs the pointer and one shard, both usually held, and only on
   * this path.
   */
  async #goneObject(plan: ListPlan, objectId: string): Promise<ReadOutcome> {
    const current = await this.#currentEntry(plan);
    if (!current.ok) return current;
    const { entry } = current;
    if (Array.isArray(entry) && entry[0] === objectId)
      throw new DependencyError('objects', `object ${objectId} of the current version is missing`);
    return {
      ok: false,
      reason: 'refused',
      error: apiError('invalid_parameter', `${INVALID_CURSOR_MESSAGE} It has expired.`),
    };
  }

  /** The live pointer and the plan's entry in its index; refused when no catalogue is published. */
  async #currentEntry(
    plan: ListPlan | DetailPlan,
  ): Promise<{ ok: true; pointer: Pointer; entry: IndexEntry | undefined } | ReadRefusal> {
    const current = await this.#pointer.current();
    if (!current.ok) return noCatalogue();
    return {
      ok: true,
      pointer: current.pointer,
      entry: await this.#entry(current.pointer, this.#factsOf(plan)),
    };
  }

  /**
   * The index entry of `key` in the version `pointer` names: one shard read the first time a container
   * needs that shard, none after (shards are immutable and named by their content).
   */
  async #entry(pointer: Pointer, facts: PlanFacts): Promise<IndexEntry | undefined> {
    const shardId = shardIdOf(pointer, facts);
    const shard = await this.#cache.getOrLoad(cacheKey.shard(shardId), async () => {
      const bytes = await this.#verifiedRead(shardId, undefined, shardId);
      if (!bytes) throw new DependencyError('objects', `index shard ${shardId} is missing`);
      const entries = parseShard(bytes, pointer.format);
      if (!entries) throw new DependencyError('objects', `index shard ${shardId} is malformed`);
      return { value: entries, weight: SHARD_WEIGHT_FACTOR * bytes.byteLength };
    });
    return shard && entryIn(shard, facts.indexKey);
  }

  /**
   * Bytes of an immutable object (or a range of it) that hash to `digest`, through the cache (which holds only
   * bytes that passed); `undefined` when the object is missing.
   */
  #range(
    objectId: string,
    range: readonly [number, number] | undefined,
    digest: string,
  ): Promise<Buffer | undefined> {
    return this.#cache.getOrLoad(cacheKey.range(objectId, range), async () => {
      const bytes = await this.#verifiedRead(objectId, range, digest);
      return bytes && { value: bytes, weight: bytes.byteLength };
    });
  }

  /**
   * Read bytes that must hash to `digest`: read again once when they do not (a damaged answer, a torn read),
   * then it is the store's fault. Costs one SHA-256 of the bytes, on a cache miss only.
   */
  async #verifiedRead(
    objectId: string,
    range: readonly [number, number] | undefined,
    digest: string,
  ): Promise<Buffer | undefined> {
    for (let read = 1; ; read++) {
      const bytes = await this.#read(objectId, range);
      if (!bytes || digest128(bytes) === digest) return bytes;
      if (read >= INTEGRITY_READS) {
        const what = range ? `bytes ${range[0]}-${range[1]} of object ${objectId}` : `object ${objectId}`;
        throw new DependencyError('objects', `${what} failed their integrity check (${read} reads)`);
      }
    }
  }

  /** A composed answer and its ETag (a hash of its bytes), composed and hashed once while it stays hot. */
  async #composed(key: string, compose: () => Promise<Buffer>): Promise<Composed> {
    const composed = await this.#cache.getOrLoad(key, async () => {
      const body = await compose();
      return { value: { ok: true, body, etag: etagOfBytes(body) } as Composed, weight: body.byteLength };
    });
    return composed!;
  }

  #factsOf(plan: Plan): PlanFacts {
    let facts = this.#facts.get(plan);
    if (facts) return facts;
    const indexKey = plan.kind === 'detail' ? detailKey(plan.resource, plan.id) : plan.variant;
    facts = { indexKey, indexHash: shardHash(indexKey) };
    if (plan.kind === 'list' && plan.cursor !== undefined) {
      const state = decodeCursor(plan.cursor, plan.variant, this.#options.cursorSecret);
      if (state) {
        const etag = this.#listEtag(state.objectId, state.offset, plan);
        facts.cursor = { state, etag, cacheKey: cacheKey.cursorPage(etag) };
      }
    }
    this.#facts.set(plan, facts);
    return facts;
  }

  /**
   * A cursor page's ETag: what selects its bytes from the immutable object (offset, limit, mask), the cursor
   * secret (its next_cursor), and the variant (two variants can share an object but not their cursors).
   */
  #listEtag(objectId: string, offset: number, plan: ListPlan): string {
    return etagFor([objectId, offset, plan.limit, plan.mask, this.#secretFingerprint, plan.variant]);
  }

  #cursorFor(plan: ListPlan): (state: CursorState) => string {
    return (state) => encodeCursor(state, plan.variant, this.#options.cursorSecret);
  }

  /** The bytes of an object (or a range of it) from the store, or `undefined` when it does not exist. */
  async #read(objectId: string, range?: readonly [number, number]): Promise<Buffer | undefined> {
    const result = await this.#get(objectKeyFor(this.#options.prefix, objectId), range ? { range } : {});
    return result.ok ? result.body : undefined;
  }

  #get(key: string, options: GetOptions) {
    return callWithDeadline('objects', this.#options.dependencyTimeoutMs, (signal) =>
      this.#options.objects.get(key, { ...options, signal }),
    );
  }
}

const EMPTY_LIST: Composed = { ok: true, body: EMPTY_LIST_BODY, etag: etagOfBytes(EMPTY_LIST_BODY) };

/** The answer while no pointer object exists: nothing has been published to the prefix. */
function noCatalogue(): ReadRefusal {
  return {
    ok: false,
    reason: 'refused',
    error: apiError('configuration_error', 'No catalogue is published.'),
  };
}

/** An index shard as parsed and kept in the byte cache. */
type ParsedShard = Record<string, IndexEntry>;

/**
 * A first page or a detail, given its index entry: its outcome, or the composed answer it needs (with no
 * cache key when it is composed from unverified bytes).
 */
type Resolved = { outcome: ReadOutcome } | { cacheKey: string | undefined; compose: () => Promise<Buffer> };

/**
 * The digests a list entry records for a first page's range (segment 0) and its cursor's (pair 0); a list of
 * one segment records none, its object id is both. Undefined digests only for a list of more than one
 * segment of format 2, which recorded none; in format 3 such an entry is malformed (an origin fault).
 */
function listDigests(entry: ListEntry, format: Pointer['format']): { segment0?: string; pair0?: string } {
  if (entry.length === 5) return { segment0: entry[3], pair0: entry[4] };
  if (entry[1] <= SEGMENT_SIZE) return { segment0: entry[0], pair0: entry[0] };
  if (format !== FORMAT_VERSION) return {};
  throw new DependencyError('objects', `index entry of object ${entry[0]} records no digests`);
}

/** The shard `pointer` names for a plan's index key. */
function shardIdOf(pointer: Pointer, facts: PlanFacts): string {
  return pointer.shards[facts.indexHash % pointer.shards.length]!;
}

function entryIn(shard: ParsedShard, key: string): IndexEntry | undefined {
  return Object.hasOwn(shard, key) ? shard[key] : undefined;
}

/** An answer whose ETag is the hash of its bytes, or its 304 (the matcher knows which coding's tag matched). */
function answer(composed: Composed, ifNoneMatch: IfNoneMatch): ReadOutcome {
  const matched = ifNoneMatch(composed.etag, composed.body.byteLength);
  return matched ? { ok: false, reason: 'not-modified', etag: matched } : composed;
}

/** Objects named by the index are the builder's output: bytes that do not decode are an origin fault. */
function originBytes(compose: () => Buffer): Buffer {
  try {
    return compose();
  } catch (error) {
    if (error instanceof FormatError)
      throw new DependencyError('objects', `stored object is malformed: ${error.message}`);
    throw error;
  }
}
