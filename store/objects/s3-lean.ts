/**
 * The proxy's object reads as lean signed GETs (aws/signed.ts) instead of the SDK's GetObject: same
 * answers, same faults, a fraction of the CPU. Read-only; the builder keeps the SDK store (s3.ts).
 */
import { AwsCallError, type CredentialSource, SignedClient, type SignedResponse } from '../../aws/signed.js';
import { DependencyError } from '../errors.js';
import type { GetOptions, GetOutcome, ObjectStore } from './interface.js';
import { checkRange } from './range.js';

export interface LeanS3ObjectStoreOptions {
  bucket: string;
  /** An S3-compatible endpoint such as s3rver (path-style addressing); AWS when absent. */
  endpoint?: string | undefined;
  region: string;
  credentials: CredentialSource;
  /** Connections kept open to S3 (default 50). */
  connections?: number;
}

/**
 * S3 signs the path as sent, so keys are encoded as the SDK encodes them: everything but unreserved
 * characters and `/`.
 * @example encodeKey("cat/o/a b!") // → 'cat/o/a%20b%21'
 */
export function encodeKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/%2F/g, '/')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Where the bucket's objects live: path-style on a custom endpoint, virtual-hosted on AWS (path-style for
 * dotted bucket names, whose virtual host would not match S3's certificate — as the SDK does).
 * @example objectAddress({ bucket: 'cat', region: 'eu-west-1' }) // → { origin: 'https://cat.s3.eu-west-1.amazonaws.com', base: '/' }
 */
export function objectAddress(options: Pick<LeanS3ObjectStoreOptions, 'bucket' | 'endpoint' | 'region'>): {
  origin: string;
  base: string;
} {
  const bucket = encodeKey(options.bucket);
  if (options.endpoint) {
    const url = new URL(options.endpoint);
    return { origin: url.origin, base: `${url.pathname.replace(/\/$/, '')}/${bucket}/` };
  }
  if (options.bucket.includes('.')) {
    return { origin: `https://s3.${options.region}.amazonaws.com`, base: `/${bucket}/` };
  }
  return { origin: `https://${options.bucket}.s3.${options.region}.amazonaws.com`, base: '/' };
}

/** The `<Code>` of an S3 error body, without an XML parser: it is near the start of a short document. */
function errorCode(body: Buffer): string | undefined {
  return /<Code>([^<]{1,100})<\/Code>/.exec(body.toString('utf8', 0, Math.min(body.length, 2048)))?.[1];
}

/**
 * The error a GET answer carries; none for the answers `get` takes (ok, partial, not modified, not found).
 * The signed client sends 500 InternalError and 503 SlowDown again, as the SDK does; 403 and the rest not.
 */
function getErrorCode({ status, body }: SignedResponse): string | undefined {
  if (status === 200 || status === 206 || status === 304 || status === 404) return undefined;
  return errorCode(body) ?? `HTTP ${status}`;
}

/**
 * `get` as S3ObjectStore answers it: 200/206 → ok with the ETag, 304 → not-modified, 404 → not-found,
 * anything else (403 included) → DependencyError naming the status and S3's error code.
 * @example
 * const store = new LeanS3ObjectStore({ bucket: 'catalogue', region: 'eu-west-1',
 *   credentials: () => environmentCredentials()! });
 * const page = await store.get('v1/o/abc', { range: [0, 4096], signal: AbortSignal.timeout(1000) });
 */
export class LeanS3ObjectStore implements ObjectStore {
  readonly #client: SignedClient;
  readonly #base: string;

  constructor(options: LeanS3ObjectStoreOptions) {
    const { origin, base } = objectAddress(options);
    this.#base = base;
    this.#client = new SignedClient({
      origin,
      service: 's3',
      region: options.region,
      credentials: options.credentials,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  async get(key: string, options: GetOptions = {}): Promise<GetOutcome> {
    const headers: Record<string, string> = {};
    if (options.range) {
      checkRange(options.range);
      // HTTP ranges are inclusive; ours end exclusively.
      headers.range = `bytes=${options.range[0]}-${options.range[1] - 1}`;
    }
    if (options.ifNoneMatch !== undefined) headers['if-none-match'] = options.ifNoneMatch;
    let response: SignedResponse;
    try {
      response = await this.#client.request({
        method: 'GET',
        path: this.#base + encodeKey(key),
        headers,
        signal: options.signal,
        retryOnReset: true,
        errorCode: getErrorCode,
      });
    } catch (error) {
      const name = error instanceof AwsCallError ? error.name : 'error';
      throw new DependencyError('objects', `s3 get ${key} failed (${name})`, { cause: error });
    }
    const { status } = response;
    if (status === 200 || status === 206) {
      const etag = response.headers.etag;
      return { ok: true, body: response.body, etag: typeof etag === 'string' ? etag : '' };
    }
    if (status === 304) return { ok: false, reason: 'not-modified' };
    if (status === 404) return { ok: false, reason: 'not-found' };
    const code = errorCode(response.body);
    throw new DependencyError(
      'objects',
      `s3 get ${key} failed (${[code, status].filter(Boolean).join(' ')})`,
      {
        cause: new AwsCallError(code ?? `HTTP ${status}`, `S3 answered ${status}`, status),
      },
    );
  }

  /** Close the connections (tests, benchmarks). */
  close(): Promise<void> {
    return this.#client.close();
  }
}
