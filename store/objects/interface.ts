/**
 * Object storage, as the proxy reads it and the builder writes it. Implementations: S3 (any S3-compatible
 * endpoint), a local directory, and memory (tests, benchmarks). Object keys are full keys (prefix included).
 * Infrastructure faults (network, timeout, access denied) are thrown as `DependencyError`; a missing object
 * or a matching `ifNoneMatch` are values, not exceptions.
 */
export interface GetOptions {
  /** Byte range [start, end) to read; the whole object when absent. */
  range?: readonly [start: number, end: number];
  /** Answer `not-modified` when the object's current ETag equals this one (used to poll the pointer). */
  ifNoneMatch?: string;
  signal?: AbortSignal;
}

/** What a read found: the bytes and their ETag, or why there are none (neither is a fault). */
export type GetOutcome =
  | { ok: true; body: Buffer; etag: string }
  | { ok: false; reason: 'not-modified' | 'not-found' };

export interface ObjectStore {
  get(objectKey: string, options?: GetOptions): Promise<GetOutcome>;
}

export interface ListedObject {
  /** The object key. */
  key: string;
  size: number;
  /** The object's ETag, where the store's listing says it (S3, memory). */
  etag?: string;
  /** When the object was last written, where the store's listing says it (S3: to the second; memory). */
  lastModified?: Date;
}

/**
 * A condition on a write, as S3's conditional writes have it (PutObject `If-None-Match: *` and
 * `If-Match: <etag>`): create the object only if there is none, or replace it only while its ETag is the one
 * read before. Atomic in every store: of two writers with the same condition, one wins.
 */
export type WriteCondition = { ifNoneMatch: '*' } | { ifMatch: string };

/**
 * What a conditional write came to: written, with the object's new ETag; or not written because the condition
 * did not hold (S3: 412 PreconditionFailed, 404 NoSuchKey for If-Match on a missing object, 409
 * ConditionalRequestConflict while another conditional write of the key is in flight).
 */
export type ConditionalPutOutcome = { ok: true; etag: string } | { ok: false; reason: 'precondition-failed' };

export interface WritableObjectStore extends ObjectStore {
  /** Write an object atomically: readers see the old bytes or the new, never a part. */
  put(
    objectKey: string,
    body: Uint8Array,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<void>;
  /** Write an object atomically if `condition` holds at that moment ({@link WriteCondition}). */
  putIf(
    objectKey: string,
    body: Uint8Array,
    condition: WriteCondition,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<ConditionalPutOutcome>;
  /** Every object whose object key starts with `prefix`. */
  list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ListedObject>;
  /** Delete the given keys; missing keys are not an error. */
  delete(objectKeys: readonly string[], options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Remove what interrupted writes left behind (a directory's temporary files; S3 writes leave none), when
   * no live writer can still need it; `deep` also looks among the objects (a full listing). Resolves to the
   * number of files removed.
   */
  collectTemporary?(options?: { deep?: boolean }): Promise<number>;
}
