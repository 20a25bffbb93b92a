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
}

export interface WritableObjectStore extends ObjectStore {
  /** Write an object atomically: readers see the old bytes or the new, never a part. */
  put(
    objectKey: string,
    body: Uint8Array,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<void>;
  /** Every object whose object key starts with `prefix`. */
  list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ListedObject>;
  /** Delete the given keys; missing keys are not an error. */
  delete(objectKeys: readonly string[], options?: { signal?: AbortSignal }): Promise<void>;
}
