/** An object store in memory: tests, benchmarks and the builder's dry runs. */
import { createHash } from 'node:crypto';
import type {
  ConditionalPutOutcome,
  GetOptions,
  GetOutcome,
  ListedObject,
  WritableObjectStore,
  WriteCondition,
} from './interface.js';
import { clampRange } from './range.js';

interface StoredObject {
  body: Buffer;
  etag: string;
}

/**
 * Holds objects in a Map. Bodies are copied on `put`, so a caller reusing its buffer cannot change them.
 * @example
 * const store = new MemoryObjectStore();
 * await store.put('o/abc', Buffer.from('hello'));
 * await store.get('o/abc', { range: [1, 3] }); // → { ok: true, body: <'el'>, etag: '"…"' }
 */
export class MemoryObjectStore implements WritableObjectStore {
  readonly #objects = new Map<string, StoredObject>();

  async get(key: string, options: GetOptions = {}): Promise<GetOutcome> {
    const object = this.#objects.get(key);
    if (!object) return { ok: false, reason: 'not-found' };
    if (options.ifNoneMatch !== undefined && options.ifNoneMatch === object.etag) {
      return { ok: false, reason: 'not-modified' };
    }
    if (!options.range) return { ok: true, body: object.body, etag: object.etag };
    const [start, end] = clampRange(options.range, object.body.byteLength);
    return { ok: true, body: object.body.subarray(start, end), etag: object.etag };
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    this.#store(key, body);
  }

  async putIf(key: string, body: Uint8Array, condition: WriteCondition): Promise<ConditionalPutOutcome> {
    const current = this.#objects.get(key);
    const holds = 'ifNoneMatch' in condition ? !current : current?.etag === condition.ifMatch;
    if (!holds) return { ok: false, reason: 'precondition-failed' };
    return { ok: true, etag: this.#store(key, body) };
  }

  #store(key: string, body: Uint8Array): string {
    const copy = Buffer.from(body);
    // A content hash, like S3's MD5 ETag: re-putting the same bytes keeps the ETag.
    const etag = `"${createHash('sha256').update(copy).digest('base64url').slice(0, 22)}"`;
    this.#objects.set(key, { body: copy, etag });
    return etag;
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const keys = [...this.#objects.keys()].filter((key) => key.startsWith(prefix)).sort();
    for (const key of keys) {
      const object = this.#objects.get(key);
      if (object) yield { key, size: object.body.byteLength, etag: object.etag };
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#objects.delete(key);
  }

  /** Number of objects held (tests). */
  get size(): number {
    return this.#objects.size;
  }
}
