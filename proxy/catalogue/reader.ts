/**
 * Plans → bytes: the catalogue's read path. At most one data read per request (plus the pointer re-check
 * when it is due). A cursor page's 304 is decided from the cursor alone, before any read; other answers carry
 * the ETag of their bytes, so it changes exactly when what the consumer sees changes.
 */
import { createHash } from 'node:crypto';
import type { IfNoneMatch } from '../core/coding.js';
import { callWithDeadline } from '../core/deadline.js';
import { type ApiError, apiError } from '../core/errors.js';
import type { DetailPlan, ListPlan, Plan } from '../core/plan.js';
import { DependencyError } from '../errors.js';
import {
  type CursorState,
  decodeCursor,
  encodeCursor,
  etagFor,
  etagOfBytes,
  FormatError,
  objectKeyFor,
  POINTER_KEY,
} from '../format.js';
import type { GetOptions, ObjectStore } from '../objects/interface.js';
import { composeDetail, composeListPage, EMPTY_LIST_BODY } from './compose.js';
import { PointerCache } from './pointer.js';

export type ReadOutcome =
  | { kind: 'ok'; body: Buffer; etag: string }
  /** `etag`: the tag the request's If-None-Match matched (identity or a coding's, see core/coding.ts). */
  | { kind: 'not-modified'; etag: string }
  | { kind: 'error'; error: ApiError };

export interface CatalogueOptions {
  objects: ObjectStore;
  /** Key prefix of the published catalogue ('' or ending in '/'). */
  prefix: string;
  cursorSecret: string;
  pointerTtlMs: number;
  dependencyTimeoutMs: number;
  /** Clock in milliseconds (the pointer's TTL). */
  now: () => number;
}

const EXPIRED_CURSOR =
  'cursor is not valid for this query: pass page.next_cursor back unchanged, with the same filters and sort.';

/**
 * @example
 * const catalogue = new Catalogue({ objects, prefix: '', cursorSecret, pointerTtlMs: 5000, dependencyTimeoutMs: 2000, now: Date.now });
 * await catalogue.read(plan, ifNoneMatchFor(request.headers['if-none-match'], accepted)); // → { kind: 'ok', … } | …
 */
export class Catalogue {
  readonly #options: CatalogueOptions;
  readonly #pointer: PointerCache;
  /** Cursors in a body depend on the secret: rotating it must change list ETags. */
  readonly #secretFingerprint: string;

  constructor(options: CatalogueOptions) {
    this.#options = options;
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
   * Answer a plan. Throws {@link DependencyError} when the object store fails; every other outcome is a value
   * (`configuration_error` when nothing is published, `not_found`, `invalid_parameter` for a bad cursor).
   */
  read(plan: Plan, ifNoneMatch: IfNoneMatch): Promise<ReadOutcome> {
    if (plan.kind === 'detail') return this.#detail(plan, ifNoneMatch);
    return plan.cursor === undefined
      ? this.#firstPage(plan, ifNoneMatch)
      : this.#laterPage(plan, plan.cursor, ifNoneMatch);
  }

  async #firstPage(plan: ListPlan, ifNoneMatch: IfNoneMatch): Promise<ReadOutcome> {
    const current = await this.#pointer.current();
    if (!current.ok)
      return { kind: 'error', error: apiError('configuration_error', 'No catalogue is published.') };
    const entry = Object.hasOwn(current.index.lists, plan.variant)
      ? current.index.lists[plan.variant]
      : undefined;
    // A filter that matches nothing has no object: the answer is the empty list.
    if (!entry) return answer(EMPTY_LIST_BODY, ifNoneMatch);
    const [objectId, , segment0End] = entry;
    const bytes = await this.#object(objectId, [0, segment0End]);
    if (!bytes) throw new DependencyError('objects', `the index names object ${objectId}, which is missing`);
    const page = { bytes, rangeStart: 0, objectId, offset: 0, limit: plan.limit, mask: plan.mask };
    return answer(
      originBytes(() => composeListPage(page, this.#cursorFor(plan))),
      ifNoneMatch,
    );
  }

  async #laterPage(plan: ListPlan, cursor: string, ifNoneMatch: IfNoneMatch): Promise<ReadOutcome> {
    const state = decodeCursor(cursor, plan.variant, this.#options.cursorSecret);
    if (!state) return { kind: 'error', error: apiError('invalid_parameter', EXPIRED_CURSOR) };
    // The cursor pins an immutable object, so this page's ETag is known without reading anything.
    const etag = this.#listEtag(state.objectId, state.offset, plan);
    const matched = ifNoneMatch(etag);
    if (matched) return { kind: 'not-modified', etag: matched };
    const bytes = await this.#object(state.objectId, [state.rangeStart, state.rangeEnd]);
    // Collected after its retention period: the walk has to start again from the first page.
    if (!bytes)
      return { kind: 'error', error: apiError('invalid_parameter', `${EXPIRED_CURSOR} It has expired.`) };
    const page = { ...state, bytes, limit: plan.limit, mask: plan.mask };
    try {
      return { kind: 'ok', etag, body: composeListPage(page, this.#cursorFor(plan)) };
    } catch (error) {
      if (error instanceof FormatError)
        return { kind: 'error', error: apiError('invalid_parameter', EXPIRED_CURSOR) };
      throw error;
    }
  }

  async #detail(plan: DetailPlan, ifNoneMatch: IfNoneMatch): Promise<ReadOutcome> {
    const current = await this.#pointer.current();
    if (!current.ok)
      return { kind: 'error', error: apiError('configuration_error', 'No catalogue is published.') };
    const ids = current.index[plan.resource];
    const objectId = Object.hasOwn(ids, plan.id) ? ids[plan.id] : undefined;
    if (!objectId) {
      const what = plan.resource === 'modules' ? 'module' : 'manufacturer';
      return { kind: 'error', error: apiError('not_found', `There is no ${what} with id ${plan.id}.`) };
    }
    const bytes = await this.#object(objectId);
    if (!bytes) throw new DependencyError('objects', `the index names object ${objectId}, which is missing`);
    return answer(
      originBytes(() => composeDetail(bytes, plan.mask)),
      ifNoneMatch,
    );
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

  /** The bytes of an object (or a range of it), or `undefined` when it does not exist. */
  async #object(objectId: string, range?: readonly [number, number]): Promise<Buffer | undefined> {
    const result = await this.#get(objectKeyFor(this.#options.prefix, objectId), range ? { range } : {});
    return result.status === 'ok' ? result.body : undefined;
  }

  #get(key: string, options: GetOptions) {
    return callWithDeadline('objects', this.#options.dependencyTimeoutMs, (signal) =>
      this.#options.objects.get(key, { ...options, signal }),
    );
  }
}

/** An answer whose ETag is the hash of its bytes (16 bytes of SHA-256: microseconds for a page). */
function answer(body: Buffer, ifNoneMatch: IfNoneMatch): ReadOutcome {
  const etag = etagOfBytes(body);
  const matched = ifNoneMatch(etag, body.byteLength);
  return matched ? { kind: 'not-modified', etag: matched } : { kind: 'ok', etag, body };
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
