/** An object store in an S3 bucket (AWS or any S3-compatible server such as s3rver). */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { DependencyError } from '../errors.js';
import type {
  ConditionalPutOutcome,
  GetOptions,
  GetOutcome,
  ListedObject,
  WritableObjectStore,
  WriteCondition,
} from './interface.js';
import { checkRange } from './range.js';

/** S3's limit on keys per DeleteObjects request. */
const DELETE_BATCH = 1000;

interface S3ErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(error: unknown): { name: string | undefined; status: number | undefined } {
  const shape = error as S3ErrorShape | undefined;
  return { name: shape?.name, status: shape?.$metadata?.httpStatusCode };
}

function fault(action: string, key: string, error: unknown): DependencyError {
  const { name, status } = statusOf(error);
  const detail = [name, status].filter(Boolean).join(' ');
  return new DependencyError('objects', `s3 ${action} ${key} failed${detail ? ` (${detail})` : ''}`, {
    cause: error,
  });
}

export interface S3ObjectStoreOptions {
  client: S3Client;
  bucket: string;
}

/**
 * Objects in one bucket; keys are full object keys (prefix included).
 * `get` is on the proxy's request path: one GetObject, ranged when asked, conditional when asked.
 * @example
 * const store = new S3ObjectStore({ client: s3Client({ endpoint }), bucket: 'catalogue' });
 * const page = await store.get('v1/o/abc', { range: [0, 4096], signal: AbortSignal.timeout(1000) });
 */
export class S3ObjectStore implements WritableObjectStore {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(options: S3ObjectStoreOptions) {
    this.#client = options.client;
    this.#bucket = options.bucket;
  }

  async get(key: string, options: GetOptions = {}): Promise<GetOutcome> {
    if (options.range) checkRange(options.range);
    try {
      const response = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          // HTTP ranges are inclusive; ours end exclusively.
          Range: options.range ? `bytes=${options.range[0]}-${options.range[1] - 1}` : undefined,
          IfNoneMatch: options.ifNoneMatch,
        }),
        { abortSignal: options.signal },
      );
      if (!response.Body) throw new Error('response without a body');
      const bytes = await response.Body.transformToByteArray();
      const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      return { ok: true, body, etag: response.ETag ?? '' };
    } catch (error) {
      const { name, status } = statusOf(error);
      // The SDK throws on 304 rather than returning it.
      if (status === 304) return { ok: false, reason: 'not-modified' };
      if (name === 'NoSuchKey' || status === 404) return { ok: false, reason: 'not-found' };
      throw fault('get', key, error);
    }
  }

  async put(
    key: string,
    body: Uint8Array,
    options: { contentType?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Body: body,
          ContentType: options.contentType ?? 'application/octet-stream',
        }),
        { abortSignal: options.signal },
      );
    } catch (error) {
      throw fault('put', key, error);
    }
  }

  async putIf(
    key: string,
    body: Uint8Array,
    condition: WriteCondition,
    options: { contentType?: string; signal?: AbortSignal } = {},
  ): Promise<ConditionalPutOutcome> {
    try {
      const response = await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Body: body,
          ContentType: options.contentType ?? 'application/octet-stream',
          ...('ifNoneMatch' in condition ? { IfNoneMatch: '*' } : { IfMatch: condition.ifMatch }),
        }),
        { abortSignal: options.signal },
      );
      return { ok: true, etag: response.ETag ?? '' };
    } catch (error) {
      const { name, status } = statusOf(error);
      // 412: the condition does not hold; 404: If-Match on a missing object; 409: another conditional write
      // of the key is in flight (S3 says: read again and retry) — for the caller, all three mean "not yours".
      if (
        status === 412 ||
        status === 409 ||
        (status === 404 && 'ifMatch' in condition) ||
        name === 'PreconditionFailed'
      )
        return { ok: false, reason: 'precondition-failed' };
      throw fault('put', key, error);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<ListedObject> {
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.#client.send(
          new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ContinuationToken: token }),
          { abortSignal: options.signal },
        );
      } catch (error) {
        throw fault('list', prefix, error);
      }
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield {
          key: object.Key,
          size: object.Size ?? 0,
          ...(object.ETag !== undefined && { etag: object.ETag }),
          ...(object.LastModified !== undefined && { lastModified: object.LastModified }),
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(keys: readonly string[], options: { signal?: AbortSignal } = {}): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      let errors: { Key?: string; Code?: string; Message?: string }[] | undefined;
      try {
        const response = await this.#client.send(
          new DeleteObjectsCommand({
            Bucket: this.#bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
          { abortSignal: options.signal },
        );
        errors = response.Errors;
      } catch (error) {
        throw fault('delete', batch[0] ?? '', error);
      }
      const failed = (errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        const first = failed[0]!;
        throw new DependencyError(
          'objects',
          `s3 delete failed for ${failed.length} key(s), first ${first.Key}: ${first.Code} ${first.Message ?? ''}`,
        );
      }
    }
  }
}
